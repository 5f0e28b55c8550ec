/**
 * `npm run bench` flags, declared once (help text and env vars come from the same table) and turned into one
 * frozen BenchConfig. Scenario defaults (actor count, workers, cache size) are applied here, nowhere else.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFlags, formatHelp, UsageError, type FlagSpecs } from '../lib/flags.js';
import { ARM_NAMES, SCENARIOS, type ArmName, type ScenarioName } from './types.js';

/**
 * faults: room on the 3 workers left after the kill for the load's actors and every cold actor woken at once when
 * an outage ends (30/s for an extproc restart of up to about 3 s on a loaded machine: about 100 at once; with 40
 * per worker a run met RESOURCE_EXHAUSTED).
 */
const FAULTS_WORKER_CAPACITY = 100;

/**
 * overload: actors that are not the cold storm's (the hit load's warm actors and the slow uploads' actors, woken
 * before the first phase; `scenarios/overload.ts`), and the floods' sizes, full and --quick.
 */
export const OVERLOAD_HOT_ACTORS = 4;
export const OVERLOAD_UPLOAD_ACTORS = 16;
export const OVERLOAD_SIZES = Object.freeze({
  full: Object.freeze({ idle: 10_000, slowloris: 2_000, uploads: 1_000, cold: 5_000 }),
  quick: Object.freeze({ idle: 1_000, slowloris: 200, uploads: 100, cold: 500 }),
});
/** overload: room on the workers for every actor, the cold storm's included (64 workers hold 6,400). */
const OVERLOAD_WORKER_CAPACITY = 100;
/** overload: seconds each flood is held while the hit load is measured (--quick: 3), unless --duration is given. */
const OVERLOAD_WINDOW_S = 10;
/** overload: the hit load's connections, unless --connections is given. */
const OVERLOAD_CONNECTIONS = 256;
const OVERLOAD_QUICK_WINDOW_S = 3;

/**
 * heavy-filter: its hot actors; the connections its open-loop load spreads over (a request due while every one is
 * busy waits in the pool, and that wait counts); and a TTL no run outlives, so that every GET after the warm-up is a
 * cache hit (a miss's ext_proc round trip would read as the hits' tail), unless --actors, --connections or
 * --cache-ttl-ms are given.
 */
const HEAVY_ACTORS = 8;
const HEAVY_CONNECTIONS = 32;
const HEAVY_CACHE_TTL_MS = 600_000;

export interface OverloadSizes {
  /** Idle client connections opened and held. */
  readonly idle: number;
  /** Connections sending their request head a byte at a time. */
  readonly slowloris: number;
  /** Concurrent 1 MiB uploads to actors that answer 3 s after the body. */
  readonly uploads: number;
  /** Distinct cold actors asked for at once (the stub seeds them suspended). */
  readonly cold: number;
}

export const BENCH_FLAGS = {
  scenario: { type: 'choice', choices: SCENARIOS, default: 'steady', env: 'BENCH_SCENARIO', help: 'what load to run' },
  arms: { type: 'list', env: 'BENCH_ARMS', help: `arms to run, comma-separated, of ${ARM_NAMES.join(',')} (default: every arm the scenario supports)` },
  actors: { type: 'number', default: 0, env: 'BENCH_ACTORS', help: 'actors the load spreads over; 0 = scenario default (50; many-actors 10000; faults 24; fleet 48; grpc 2; heavy-filter 8; overload: not used, its actors follow --overload-cold)' },
  connections: { type: 'number', default: 8, min: 1, env: 'BENCH_CONNECTIONS', help: 'concurrent client connections (overload: the hit load\'s, default 256; heavy-filter: its load\'s pool, default 32)' },
  duration: { type: 'number', float: true, default: 20, min: 0.1, env: 'BENCH_DURATION', help: 'measured seconds per arm (overload: seconds each flood is held, default 10, --quick 3)' },
  warmup: { type: 'number', float: true, default: 5, env: 'BENCH_WARMUP', help: 'warm-up seconds per arm before the measured window' },
  quick: { type: 'boolean', default: false, env: 'BENCH_QUICK', help: 'smoke run: 2 s per arm after a 1 s warm-up (fleet: 6 s with a 2 s cache TTL); an explicit --duration/--warmup/--cache-ttl-ms wins' },
  target: { type: 'string?', env: 'BENCH_TARGET', help: 'URL of an already running proxy (e.g. docker compose); runs only the arm "target"' },
  'target-admin': { type: 'string?', env: 'BENCH_TARGET_ADMIN', help: 'with --target: the proxy admin URL, for its /stats' },
  'stub-admin': { type: 'string?', env: 'BENCH_STUB_ADMIN', help: 'with --target: the apiserver-stub admin URL, for ResumeActor counts and churn' },
  'extproc-admin': { type: 'string?', env: 'BENCH_EXTPROC_ADMIN', help: 'with --target: the extproc admin URL, for stream counts' },
  'churn-rate': { type: 'number', float: true, default: 10, env: 'BENCH_CHURN_RATE', help: 'churn: actor suspends plus moves per second (half each)' },
  'cache-ttl-ms': { type: 'number', default: 5000, min: 1, env: 'BENCH_CACHE_TTL_MS', help: 'proxy --cache-ttl-ms for the cache arms' },
  'cache-max-entries': { type: 'number', default: 0, env: 'BENCH_CACHE_MAX_ENTRIES', help: 'proxy --cache-max-entries; 0 = default (100000; many-actors 2000)' },
  'resolve-latency-ms': { type: 'number', default: 1, env: 'BENCH_RESOLVE_LATENCY_MS', help: 'stub --resolve-latency-ms and --read-latency-ms (cost of one resolve, and of one GetActor or GetActorEgressPolicy read)' },
  'cold-resume-ms': { type: 'number', default: 50, env: 'BENCH_COLD_RESUME_MS', help: 'stub --cold-resume-ms (cost of waking a suspended actor)' },
  'grpc-calls': { type: 'number', default: 10, min: 1, max: 1000, env: 'BENCH_GRPC_CALLS', help: 'grpc: concurrent streaming calls per round (K), all to one actor' },
  'grpc-replies': { type: 'number', default: 40, min: 1, max: 200, env: 'BENCH_GRPC_REPLIES', help: 'grpc: replies per streaming call (the worker sends one every 5 ms: 40 ≈ 200 ms)' },
  'grpc-rounds': { type: 'number', default: 5, min: 1, env: 'BENCH_GRPC_ROUNDS', help: 'grpc: rounds of K concurrent calls, and of a unary call beside a long stream (--quick: 2)' },
  'zipf-s': { type: 'number', float: true, default: 1, env: 'BENCH_ZIPF_S', help: 'many-actors: Zipf exponent of the key popularity' },
  workers: { type: 'number', default: 0, env: 'BENCH_WORKERS', help: 'stub workers; 0 = enough for the actors (64; many-actors 64; faults 4 separate worker processes; grpc 1)' },
  'worker-capacity': { type: 'number', default: 0, env: 'BENCH_WORKER_CAPACITY', help: 'actors per worker; 0 = default (1; many-actors 160; faults 100; grpc: every actor on one worker; overload 100)' },
  atespace: { type: 'string', default: 'demo', env: 'BENCH_ATESPACE', help: 'atespace of the actors' },
  'actor-suffix': { type: 'string', default: 'actors.resources.substrate.ate.dev', env: 'ACTOR_SUFFIX', help: 'actor host suffix' },
  seed: { type: 'number', default: 1, env: 'BENCH_SEED', help: 'seed of the request sequences' },
  'out-dir': { type: 'string?', env: 'BENCH_OUT_DIR', help: 'where results go (default bench/results)' },
  'chart-out': { type: 'string?', env: 'BENCH_CHART_OUT', help: 'also write the SVG chart to this path' },
  echo: { type: 'boolean', default: false, env: 'BENCH_ECHO', help: "copy the components' logs to stderr" },
  'proxy-workers': { type: 'number', default: 1, min: 1, max: 64, env: 'BENCH_PROXY_WORKERS', help: 'proxy --workers N for the proxy arms (N processes sharing one binding table)' },
  replicas: { type: 'number', default: 3, min: 1, max: 8, env: 'BENCH_REPLICAS', help: 'fleet: proxy replicas behind HAProxy (the scale phase adds one)' },
  'hash-balance-factor': {
    type: 'number',
    default: 300,
    env: 'BENCH_HASH_BALANCE_FACTOR',
    help: "fleet: HAProxy's hash-balance-factor for the hashing arms (a server takes at most this % of the average load; 0: no bound)",
  },
  tracing: {
    type: 'choice',
    choices: ['off', 'on'],
    default: 'off',
    env: 'BENCH_TRACING',
    help: 'on: the proxy and extproc trace every arm (OTLP/HTTP JSON to a receiver in the bench process that counts the spans and drops them)',
  },
  'trace-ratio': { type: 'number', float: true, default: 1, min: 0, max: 1, env: 'BENCH_TRACE_RATIO', help: 'with --tracing on: the share of requests sampled (parentbased_traceidratio)' },
  profile: { type: 'boolean', default: false, env: 'BENCH_PROFILE', help: 'run each proxy (and floor) under node --cpu-prof; writes the profiles and a top self-time table per arm next to the results' },
  rounds: { type: 'number', default: 20, min: 1, env: 'BENCH_ROUNDS', help: 'side-by-side: rounds of --duration seconds, every arm loaded at the same time in each (--quick: 3)' },
  'compare-build': {
    type: 'list',
    env: 'BENCH_COMPARE_BUILD',
    help: 'side-by-side: another built checkout (the folder holding its dist/); its proxy runs arm C beside this one\'s, as arm "C@<folder name>", with the V8 flags this build sets for itself; repeat it (or separate by commas) for several builds in one run',
  },
  rate: { type: 'number', default: 0, min: 0, env: 'BENCH_RATE', help: 'side-by-side: requests per second sent to each arm (0: a closed loop, each connection as fast as it is answered)' },
  control: { type: 'boolean', default: false, env: 'BENCH_CONTROL', help: 'side-by-side: a second copy of arm C ("C copy"), whose ratio to C is the method\'s own bias and noise' },
  'overload-idle': { type: 'number', default: 0, min: 0, max: 100_000, env: 'BENCH_OVERLOAD_IDLE', help: 'overload: idle client connections of phase (a); 0 = 10000 (--quick: 1000)' },
  'overload-slowloris': { type: 'number', default: 0, min: 0, max: 100_000, env: 'BENCH_OVERLOAD_SLOWLORIS', help: 'overload: connections sending their head a byte at a time in phase (b); 0 = 2000 (--quick: 200)' },
  'overload-uploads': { type: 'number', default: 0, min: 0, max: 100_000, env: 'BENCH_OVERLOAD_UPLOADS', help: 'overload: concurrent 1 MiB uploads to slow actors in phase (c); 0 = 1000 (--quick: 100)' },
  'overload-hit-rate': {
    type: 'number',
    default: 1000,
    min: 0,
    env: 'BENCH_OVERLOAD_HIT_RATE',
    help: 'overload: requests per second of the hit load beside the floods, over --connections connections (0: a closed loop, each connection as fast as it is answered)',
  },
  'heavy-rate': {
    type: 'number',
    default: 500,
    min: 1,
    env: 'BENCH_HEAVY_RATE',
    help: 'heavy-filter: requests per second offered to each arm, evenly spaced (an open loop); every 10th is a heavy POST, the others cache hits',
  },
  'overload-cold': { type: 'number', default: 0, min: 0, max: 100_000, env: 'BENCH_OVERLOAD_COLD', help: 'overload: distinct cold actors asked for at once in phase (d); 0 = 5000 (--quick: 500)' },
} as const satisfies FlagSpecs;

export interface BenchConfig {
  readonly scenario: ScenarioName;
  /** Arms asked for explicitly (empty = the scenario's defaults). */
  readonly arms: readonly ArmName[];
  readonly actors: number;
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly quick: boolean;
  readonly target: string | undefined;
  readonly targetAdmin: string | undefined;
  readonly stubAdmin: string | undefined;
  readonly extprocAdmin: string | undefined;
  readonly churnRate: number;
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
  readonly resolveLatencyMs: number;
  readonly coldResumeMs: number;
  readonly zipfS: number;
  /** grpc: concurrent streaming calls per round, replies per call, rounds. */
  readonly grpcCalls: number;
  readonly grpcReplies: number;
  readonly grpcRounds: number;
  readonly workers: number;
  readonly workerCapacity: number;
  readonly atespace: string;
  readonly actorSuffix: string;
  readonly seed: number;
  readonly outDir: string;
  readonly chartOut: string | undefined;
  readonly echo: boolean;
  readonly proxyWorkers: number;
  readonly replicas: number;
  readonly hashBalanceFactor: number;
  readonly profile: boolean;
  /** `--tracing on`: the ratio sampled; undefined: tracing off. */
  readonly traceRatio: number | undefined;
  /** side-by-side: rounds, another build's checkout to run beside this one, a second copy of arm C. */
  readonly rounds: number;
  readonly compareBuilds: readonly string[];
  readonly control: boolean;
  /** side-by-side: requests per second per arm; 0: closed loop. */
  readonly rate: number;
  /** overload: the floods' sizes (the scenario may size them down to the file-descriptor limits, with a note). */
  readonly overload: OverloadSizes;
  /** overload: the hit load's requests per second (0: closed loop). */
  readonly overloadHitRate: number;
  /** heavy-filter: requests per second, both kinds (`--heavy-rate`). */
  readonly heavyRate: number;
}

export const DEFAULT_OUT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/results');

function given(argv: readonly string[], env: NodeJS.ProcessEnv, flag: string, envName: string): boolean {
  return argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`)) || (env[envName] ?? '') !== '';
}

export function buildConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): { help: boolean; config: BenchConfig } {
  const { help, values: v } = readFlags(BENCH_FLAGS, argv, env);
  const arms: ArmName[] = [];
  for (const a of v.arms) {
    const found = [...ARM_NAMES, 'target'].find((n) => n.toLowerCase() === a.toLowerCase());
    if (!found) throw new UsageError(`--arms: unknown arm "${a}" (known: ${ARM_NAMES.join(', ')})`);
    arms.push(found as ArmName);
  }
  const many = v.scenario === 'many-actors';
  const faults = v.scenario === 'faults';
  const fleet = v.scenario === 'fleet';
  const grpc = v.scenario === 'grpc';
  const overload = v.scenario === 'overload';
  const heavy = v.scenario === 'heavy-filter';
  const sizes = v.quick ? OVERLOAD_SIZES.quick : OVERLOAD_SIZES.full;
  const overloadSizes: OverloadSizes = Object.freeze({
    idle: v['overload-idle'] || sizes.idle,
    slowloris: v['overload-slowloris'] || sizes.slowloris,
    uploads: v['overload-uploads'] || sizes.uploads,
    cold: v['overload-cold'] || sizes.cold,
  });
  // overload: the stub seeds the warm actors, the uploads' actors and the cold storm's (--actors does not apply).
  const actors = overload
    ? OVERLOAD_HOT_ACTORS + OVERLOAD_UPLOAD_ACTORS + overloadSizes.cold
    : v.actors > 0 ? v.actors : many ? 10_000 : faults ? 24 : fleet ? 48 : grpc ? 2 : heavy ? HEAVY_ACTORS : 50;
  const capacity = v['worker-capacity'] > 0 ? v['worker-capacity'] : many ? 160 : faults ? FAULTS_WORKER_CAPACITY : grpc ? actors : overload ? OVERLOAD_WORKER_CAPACITY : 1;
  // Room for every actor plus spare workers for moves (churn) and cold placement; faults runs a few worker
  // processes, with room left for the actors of the one it kills; grpc puts every actor on one worker (its calls
  // share that worker's HTTP/2 session).
  const workers = v.workers > 0 ? v.workers : faults ? 4 : grpc ? 1 : Math.max(64, Math.ceil((actors * 1.25) / capacity));
  if (workers * capacity < actors) throw new UsageError(`--workers ${workers} × --worker-capacity ${capacity} cannot hold ${actors} actors`);
  // Only the bench's own stack is started with tracing: a running deployment (`--target`) has its own OTEL_*, and
  // the faults and fleet scenarios start processes of their own.
  if (v.tracing === 'on' && ((v.target ?? '') !== '' || faults || fleet)) {
    throw new UsageError(`--tracing on: not with ${faults || fleet ? `--scenario ${v.scenario}` : '--target'} (set OTEL_* on the processes it measures)`);
  }
  if (overload && v['proxy-workers'] > 1) throw new UsageError('--scenario overload: one proxy process (--proxy-workers 1): its memory is the one measured');
  const quickDuration = v.quick && !given(argv, env, 'duration', 'BENCH_DURATION');
  const quickWarmup = v.quick && !given(argv, env, 'warmup', 'BENCH_WARMUP');
  // The fleet's ResumeActor figures need several TTLs in the window: a quick run shortens the TTL instead.
  const quickTtl = v.quick && fleet && !given(argv, env, 'cache-ttl-ms', 'BENCH_CACHE_TTL_MS');
  const config: BenchConfig = {
    scenario: v.scenario,
    arms,
    actors,
    // overload: the paced hit load keeps its rate while answers take up to connections ÷ rate (32 ms at 1,000/s).
    connections: !given(argv, env, 'connections', 'BENCH_CONNECTIONS') && (overload || heavy) ? (overload ? OVERLOAD_CONNECTIONS : HEAVY_CONNECTIONS) : v.connections,
    durationS: overload && !given(argv, env, 'duration', 'BENCH_DURATION') ? (v.quick ? OVERLOAD_QUICK_WINDOW_S : OVERLOAD_WINDOW_S) : quickDuration ? (fleet ? 6 : 2) : v.duration,
    warmupS: quickWarmup ? 1 : v.warmup,
    quick: v.quick,
    target: v.target,
    targetAdmin: v['target-admin'],
    stubAdmin: v['stub-admin'],
    extprocAdmin: v['extproc-admin'],
    churnRate: v['churn-rate'],
    cacheTtlMs: quickTtl ? 2000 : heavy && !given(argv, env, 'cache-ttl-ms', 'BENCH_CACHE_TTL_MS') ? HEAVY_CACHE_TTL_MS : v['cache-ttl-ms'],
    cacheMaxEntries: v['cache-max-entries'] > 0 ? v['cache-max-entries'] : many ? 2000 : 100_000,
    resolveLatencyMs: v['resolve-latency-ms'],
    coldResumeMs: v['cold-resume-ms'],
    zipfS: v['zipf-s'],
    grpcCalls: v['grpc-calls'],
    grpcReplies: v['grpc-replies'],
    grpcRounds: v.quick && !given(argv, env, 'grpc-rounds', 'BENCH_GRPC_ROUNDS') ? 2 : v['grpc-rounds'],
    workers,
    workerCapacity: capacity,
    atespace: v.atespace,
    actorSuffix: v['actor-suffix'],
    seed: v.seed,
    outDir: v['out-dir'] ? path.resolve(v['out-dir']) : DEFAULT_OUT_DIR,
    chartOut: v['chart-out'],
    echo: v.echo,
    proxyWorkers: v['proxy-workers'],
    replicas: v.replicas,
    hashBalanceFactor: v['hash-balance-factor'],
    profile: v.profile,
    traceRatio: v.tracing === 'on' ? v['trace-ratio'] : undefined,
    rounds: v.quick && !given(argv, env, 'rounds', 'BENCH_ROUNDS') ? 3 : v.rounds,
    compareBuilds: v['compare-build'].map((dir) => path.resolve(dir)),
    control: v.control,
    rate: v.rate,
    overload: overloadSizes,
    overloadHitRate: v['overload-hit-rate'],
    heavyRate: v['heavy-rate'],
  };
  return { help, config: Object.freeze(config) };
}

export function helpText(): string {
  return formatHelp('bench', 'Benchmarks the ingress arms (direct, floor, floor-1, A, B1, B2, C) against one stub and its workers.', BENCH_FLAGS)
    .replace('Usage: actor-edge bench [flags]', 'Usage: npm run bench -- [flags]');
}

export function machineCpus(): number {
  return os.cpus().length;
}
