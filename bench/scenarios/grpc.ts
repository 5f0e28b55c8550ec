/**
 * grpc: gRPC calls to one worker, which the proxy carries on that worker's one HTTP/2 session. With a grpc-js
 * client (one channel, so one connection to the ingress) and the demo service every stub worker serves
 * (`actoredge.demo.Echo`), per arm:
 * 1. one `Count` call at a time (`--grpc-replies` replies, 5 ms apart): how long one call takes alone;
 * 2. `--grpc-rounds` rounds of K = `--grpc-calls` concurrent `Count` calls to one actor: each round's wall time and
 *    the overlap ratio (the calls' summed streaming times ÷ wall time: about K when they run together, about 1 when
 *    they are served one at a time; `grpc-usage.ts`);
 * 3. a unary `Echo` alone, then the same `Echo` to another actor on the same worker, issued once a long `Count`
 *    stream (5 × the replies) has delivered its first reply: its latency, and whether the stream was still open
 *    when it was answered.
 * `direct` sends the same calls straight to the worker (the reference: what the worker does with no proxy).
 * Targets are reported, never asserted.
 */
import { ECHO_SERVICE, COUNT_INTERVAL_MS } from '../../apiserver-stub/worker/demo-grpc.js';
import { buildArmResult } from '../arm-result.js';
import { codeCounts, durationOf, EchoCaller, type CallOutcome } from '../grpc-calls.js';
import { grpcUsage, roundOf, unarySample } from '../grpc-usage.js';
import { summarize } from '../latency.js';
import type { LoadResult } from '../load.js';
import { readAll, resetAll } from '../measure.js';
import type { ArmRuntime } from '../stack.js';
import type { ArmResult, GrpcRound, UnarySample } from '../types.js';
import { byWorker, hostsOf } from './plans.js';
import type { Scenario, ScenarioContext } from './scenario.js';

/** Every call's deadline: far beyond any call's length, so a call held back is measured, not cut short. */
const CALL_DEADLINE_MS = 60_000;
/** The stream the unary call is issued beside: this many times a round's call, within the worker's 1,000 replies. */
const LONG_STREAM_FACTOR = 5;
const MAX_REPLIES = 1000;
/** One call at a time, at least this many times, for the alone figure. */
const MIN_ALONE_CALLS = 3;

interface CallTarget {
  /** host:port the calls go to: the ingress, or the worker itself for `direct`. */
  readonly address: string;
  readonly worker: string;
  readonly streamActor: string;
  readonly unaryActor: string;
}

/** The worker hosting the most running actors: its first actor streams, its second (or the same) takes the unary calls. */
function callTarget(ctx: ScenarioContext, runtime: ArmRuntime): CallTarget {
  const [worker, actors] = [...byWorker(ctx.placements).entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0] ?? [];
  if (worker === undefined || actors === undefined) throw new Error('grpc: no running actor has a worker');
  const streamActor = actors[0] as string;
  const unaryActor = actors[1] ?? streamActor;
  if (runtime.spec.kind === 'direct') {
    if (!ctx.stack) throw new Error('direct needs the bench to run the workers');
    return { address: `${worker}:${ctx.stack.workerPort}`, worker, streamActor, unaryActor };
  }
  return { address: new URL(runtime.url).host, worker, streamActor, unaryActor };
}

/** Fails the arm when a warm-up call did not succeed: the measurements would mean nothing. */
function requireOk(what: string, o: CallOutcome): void {
  if (o.kind !== 'ok') throw new Error(`grpc: warm-up ${what} failed: ${o.code} ${o.detail}`);
}

/** Opens a long stream, waits for its first reply (it is open at the worker), then makes one unary call beside it. */
async function unaryBesideStream(streamer: EchoCaller, unary: EchoCaller, replies: number): Promise<{ stream: CallOutcome; unary: CallOutcome; sample: UnarySample }> {
  let open = true;
  let firstReply!: () => void;
  const first = new Promise<void>((resolve) => (firstReply = resolve));
  const stream = streamer.count(replies, () => firstReply()).then((o) => {
    open = false;
    firstReply();
    return o;
  });
  await first;
  const answered = await unary.echo('beside a stream');
  const sample = unarySample(answered, open);
  return { stream: await stream, unary: answered, sample };
}

async function grpcArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult> {
  const { config } = ctx;
  const target = callTarget(ctx, runtime);
  const [streamHost, unaryHost] = hostsOf(config, [target.streamActor, target.unaryActor]) as [string, string];
  const K = config.grpcCalls;
  const replies = config.grpcReplies;
  const longReplies = Math.min(MAX_REPLIES, replies * LONG_STREAM_FACTOR);
  // Two channels: the unary calls come from another client connection than the streams, as another client's would.
  const streamer = new EchoCaller(target.address, streamHost, CALL_DEADLINE_MS);
  const unary = new EchoCaller(target.address, unaryHost, CALL_DEADLINE_MS);
  try {
    // Warm-up: connections opened, both actors' bindings learned, the code paths run once.
    requireOk('Echo', await unary.echo('warm'));
    requireOk('Echo', await streamer.echo('warm'));
    requireOk('Count', await streamer.count(2));
    await resetAll(runtime.probes);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const alone: CallOutcome[] = [];
    for (let i = 0; i < Math.max(MIN_ALONE_CALLS, config.grpcRounds); i++) alone.push(await streamer.count(replies));
    const rounds: GrpcRound[] = [];
    const concurrent: CallOutcome[] = [];
    for (let r = 0; r < config.grpcRounds; r++) {
      const outcomes = await Promise.all(Array.from({ length: K }, () => streamer.count(replies)));
      rounds.push(roundOf(outcomes));
      concurrent.push(...outcomes);
    }
    const unaryAlone: CallOutcome[] = [];
    for (let i = 0; i < config.grpcRounds; i++) unaryAlone.push(await unary.echo('alone'));
    const samples: UnarySample[] = [];
    const beside: CallOutcome[] = [];
    for (let r = 0; r < config.grpcRounds; r++) {
      const b = await unaryBesideStream(streamer, unary, longReplies);
      samples.push(b.sample);
      beside.push(b.stream, b.unary);
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const stats = await readAll(runtime.probes);
    const all = [...alone, ...concurrent, ...unaryAlone, ...beside];
    const failed = all.filter((o) => o.kind !== 'ok').length;
    const load: LoadResult = {
      requests: all.length,
      durationS: wallMs / 1000,
      rps: all.length / (wallMs / 1000),
      non2xx: 0,
      errors: failed,
      timeouts: all.filter((o) => o.kind === 'failed' && o.code === 'DEADLINE_EXCEEDED').length,
      statusCounts: codeCounts(all),
      latency: summarize(concurrent.map(durationOf)),
      loadgenCpuMs: (cpu.user + cpu.system) / 1000,
      loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
    };
    const usage = grpcUsage({
      worker: target.worker,
      streamActor: target.streamActor,
      unaryActor: target.unaryActor,
      concurrency: K,
      repliesPerCall: replies,
      replyIntervalMs: COUNT_INTERVAL_MS,
      longStreamReplies: longReplies,
      alone,
      rounds,
      unaryAlone,
      unaryWhileStreaming: samples,
    });
    const sameWorker = target.unaryActor !== target.streamActor ? `${target.unaryActor}, on the same worker` : `${target.unaryActor} itself (no other actor on its worker)`;
    const base = buildArmResult(runtime.spec.name, runtime.spec.description, load, stats, {
      noExtproc: !runtime.spec.extproc,
      notes: [
        `${ECHO_SERVICE}/Count: ${K} concurrent calls × ${config.grpcRounds} rounds to ${target.streamActor} on worker ${target.worker} (${replies} replies ${COUNT_INTERVAL_MS} ms apart); Echo to ${sameWorker}, beside a ${longReplies}-reply stream`,
        'calls, not HTTP requests: status codes are gRPC status names, a call not ending OK with every reply is an error; latency columns are the concurrent calls\' durations',
      ],
    });
    return { ...base, grpc: usage };
  } finally {
    streamer.close();
    unary.close();
  }
}

export const grpcScenario: Scenario = {
  name: 'grpc',
  defaultArms: ['direct', 'C'],
  supportedArms: ['direct', 'A', 'C'],
  async prepare(ctx) {
    if (ctx.stack) await ctx.stack.wakeAll(ctx.actors);
  },
  window: (config) => `${config.grpcRounds} rounds of ${config.grpcCalls} concurrent calls of ${config.grpcReplies} replies`,
  runArm: grpcArm,
};
