/**
 * The processes under test. One apiserver-stub (control plane plus its in-process workers) lives for the whole
 * run, so every arm meets the same workers and placements; each arm then starts its own front processes (a proxy,
 * an extproc, or the floor forwarder) and stops them afterwards, so peak RSS and CPU belong to that arm alone.
 * The mTLS arms need workers that terminate mTLS: the first of them starts a second stub, the same but with mTLS
 * on its control API and its workers (`bench/tls.ts`), with every actor woken, and every mTLS arm runs against it.
 */
import { TraceSink } from './trace-sink.js';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { workerNet } from '../lib/loopback.js';
import { floorWorker, hostsOf } from './scenarios/plans.js';
import { Admin, readActors, type ActorPlacement } from './admin.js';
import type { ArmSpec } from './arms.js';
import type { BenchConfig } from './config.js';
import { forEachLimited, resumeAll } from './control.js';
import { launch } from '../lib/launch.js';
import { launchComponent, launchFloor, LaunchGroup, type Launched } from './launcher.js';
import { EgressFixtures } from './egress-fixtures.js';
import { ingressTlsArgs, writeIngressCertificate, type IngressCertificate } from './ingress-cert.js';
import { controlCredentials, writeBenchCertificates, type BenchCertificates } from './tls.js';
import { extprocListenTlsFlags, proxyExtprocTlsFlags, tlsFlags, wiringFlags } from '../scripts/stack/wiring.js';

export type ProbeKind = 'stub' | 'extproc' | 'proxy' | 'floor';

/** A process whose /stats the benchmark reads. */
export interface Probe {
  readonly component: string;
  readonly kind: ProbeKind;
  readonly admin: Admin;
}

export interface ArmRuntime {
  readonly spec: ArmSpec;
  /** Where the load goes (the proxy's or floor's ingress; for direct, unused: see workerUrl). */
  readonly url: string;
  readonly probes: readonly Probe[];
  /** For floor-1: the worker it forwards to. */
  readonly fixedWorkerIp?: string;
  /** With --profile: where the proxy processes write their .cpuprofile files (complete once `stop` resolved). */
  readonly profileDir?: string;
  stop(): Promise<void>;
}

/** A proxy from another built checkout, run in a proxy arm in place of this build's (side-by-side comparisons). */
export interface OtherBuild {
  /** Its `dist/cli/main.js`. */
  readonly cliScript: string;
  /** Node flags before the script. */
  readonly nodeArgs: readonly string[];
}

/** No process listens here: arms without extproc still need the flag to be an address. */
const UNUSED_EXTPROC = '127.0.0.1:9';

export class Stack {
  /** The mTLS arms' stack, started by the first of them. */
  #mtlsStack: Promise<Stack> | undefined;
  /** The TLS arms' serving certificate, written by the first of them. */
  #ingressCert: Promise<IngressCertificate> | undefined;
  /** `--tracing on`: where the proxy and extproc send their spans. */
  #traceSink: TraceSink | undefined;
  /** Certificates for an arm with mTLS on the ext_proc hop alone (A-extproc-mtls), written by the first of them. */
  #hopCerts: Promise<BenchCertificates> | undefined;
  /** The egress arms' certificates, actor credentials and destination (`egressFixtures`). */
  #egress: Promise<EgressFixtures> | undefined;
  /** Environment every front process started from now on gets besides the stack's own (a scenario's setting for its filter). */
  readonly extraEnv: Record<string, string> = {};

  private constructor(
    readonly config: BenchConfig,
    private readonly stub: Launched,
    readonly stubAdmin: Admin,
    readonly grpc: string,
    readonly workerPort: number,
    /** Present: this stack runs mTLS on every hop with these certificates (removed when it stops). */
    private readonly certs?: BenchCertificates,
  ) {}

  static async start(config: BenchConfig, certs?: BenchCertificates): Promise<Stack> {
    const net = await workerNet();
    const stub = await launchComponent(
      'apiserver-stub',
      [
        ...stubArgs(config, net.port),
        '--workers', String(config.workers),
        '--worker-ip-base', net.ipBase,
        '--worker-capacity', String(config.workerCapacity),
        ...(certs === undefined ? [] : tlsFlags('apiserver-stub', certs.files)),
      ],
      { echo: config.echo, readyTimeoutMs: 120_000 },
    );
    const grpc = stub.addresses['grpc'];
    const admin = stub.addresses['admin'];
    if (!grpc || !admin) {
      await stub.stop();
      throw new Error(`apiserver-stub ready line lacks grpc/admin: ${JSON.stringify(stub.addresses)}`);
    }
    const stack = new Stack(config, stub, new Admin(admin), grpc, net.port, certs);
    if (config.traceRatio !== undefined) stack.#traceSink = await TraceSink.start();
    return stack;
  }

  /** The mTLS stack: certificates, a stub whose control API and workers run mTLS, every actor awake. */
  private mtlsStack(): Promise<Stack> {
    return (this.#mtlsStack ??= (async () => {
      const certs = await writeBenchCertificates();
      let stack: Stack;
      try {
        stack = await Stack.start(this.config, certs);
      } catch (err) {
        await certs.remove();
        throw err;
      }
      await stack.wakeAll((await stack.placements()).map((p) => p.name));
      return stack;
    })());
  }

  /** Every actor of the bench's atespace, with its placement, in name order. */
  async placements(): Promise<ActorPlacement[]> {
    const all = readActors(await this.stubAdmin.get('/actors'));
    return all.filter((a) => a.atespace === this.config.atespace).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The egress arms' fixtures for `names` (written by the first call; later calls get the same). */
  egressFixtures(names: readonly string[]): Promise<EgressFixtures> {
    return (this.#egress ??= EgressFixtures.write(this.config.atespace, names));
  }

  /** Wakes every actor through ResumeActor (before hot arms; not measured). */
  async wakeAll(names: readonly string[]): Promise<void> {
    await resumeAll(this.grpc, this.config.atespace, names, 64, this.certs === undefined ? undefined : controlCredentials(this.certs.files));
  }

  /** Suspends every actor through the stub admin (the cold scenario's starting line). */
  async suspendAll(names: readonly string[], concurrency = 32): Promise<void> {
    await forEachLimited(names, concurrency, (name) => actorCall(this.stubAdmin, this.config.atespace, name, 'suspend'));
  }

  private env(): NodeJS.ProcessEnv {
    const tracing = this.#traceSink === undefined || this.config.traceRatio === undefined ? {} : this.#traceSink.env(this.config.traceRatio);
    const port = String(this.workerPort);
    return { WORKER_PORT: port, EXTPROC_WORKER_PORT: port, PROXY_WORKER_PORT: port, ...tracing, ...this.extraEnv };
  }

  /** `--tracing on`: spans exported to the sink so far. */
  get traced(): { readonly exports: number; readonly spans: number } | undefined {
    const sink = this.#traceSink;
    return sink === undefined ? undefined : { exports: sink.exports, spans: sink.spans };
  }

  /**
   * Starts the front processes of one arm (`placements`: where the actors are now, for the floor's routes).
   * `build`: a proxy arm's proxy from another built checkout (its CLI script and the Node flags to give it); its
   * extproc stays this build's.
   */
  async startArm(spec: ArmSpec, placements: readonly ActorPlacement[], build?: OtherBuild): Promise<ArmRuntime> {
    if (spec.mtls && this.certs === undefined) return (await this.mtlsStack()).startArm(spec, placements, build);
    const cfg = this.config;
    const tls = this.certs?.files;
    const stubProbe: Probe = { component: 'apiserver-stub', kind: 'stub', admin: this.stubAdmin };
    const opts = { echo: cfg.echo, env: this.env() };
    if (spec.kind === 'direct') {
      return { spec, url: '', probes: [stubProbe], stop: async () => {} };
    }
    if (spec.kind === 'floor') {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-floor-'));
      const routesFile = path.join(dir, 'routes.json');
      const fixedWorkerIp = spec.floor === 'one-worker' ? floorWorker(placements).ip : undefined;
      if (fixedWorkerIp === undefined) await writeFile(routesFile, JSON.stringify(floorRoutes(cfg, placements, this.workerPort)));
      const target = fixedWorkerIp === undefined ? ['--routes', routesFile] : ['--upstream', `${fixedWorkerIp}:${this.workerPort}`];
      const profileDir = cfg.profile ? await mkdtemp(path.join(os.tmpdir(), `actor-edge-profile-${spec.name}-`)) : undefined;
      const nodeArgs = profileDir === undefined ? [] : profileArgs(profileDir);
      const headers = spec.ingressHeaders === true ? ['--ingress-headers'] : [];
      const floor = await launchFloor(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...target, ...headers], { ...opts, nodeArgs }).catch(async (err: unknown) => {
        await rm(dir, { recursive: true, force: true });
        throw err;
      });
      return {
        spec,
        url: `http://${floor.addresses['http']}`,
        probes: [{ component: 'floor', kind: 'floor', admin: new Admin(floor.addresses['admin'] as string) }, stubProbe],
        ...(fixedWorkerIp === undefined ? {} : { fixedWorkerIp }),
        ...(profileDir === undefined ? {} : { profileDir }),
        stop: async () => {
          await floor.stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    if (spec.kind !== 'proxy') throw new Error(`arm ${spec.name} cannot be started here`);
    // mTLS on the ext_proc hop alone: this (plaintext) stack, with certificates for that hop.
    const hop = tls === undefined && spec.extprocMtls === true ? (await (this.#hopCerts ??= writeBenchCertificates())).files : undefined;
    return LaunchGroup.build(async (group) => {
      let extprocGrpc = UNUSED_EXTPROC;
      const probes: Probe[] = [];
      if (spec.extproc) {
        const extproc = await group.add(launchComponent(
          'extproc',
          [
            '--listen', '127.0.0.1:0',
            '--admin', '127.0.0.1:0',
            ...wiringFlags('extproc', { apiserver: this.grpc, workerPort: this.workerPort }),
            '--actor-suffix', cfg.actorSuffix,
            ...(tls === undefined ? [] : tlsFlags('extproc', tls)),
            ...(hop === undefined ? [] : extprocListenTlsFlags(hop)),
          ],
          opts,
        ));
        extprocGrpc = extproc.addresses['grpc'] as string;
        probes.push({ component: 'extproc', kind: 'extproc', admin: new Admin(extproc.addresses['admin'] as string) });
      }
      const profileDir = cfg.profile ? await mkdtemp(path.join(os.tmpdir(), `actor-edge-profile-${spec.name}-`)) : undefined;
      const nodeArgs = profileDir === undefined ? [] : profileArgs(profileDir);
      const serving = spec.transport?.tls ? ingressTlsArgs(await (this.#ingressCert ??= writeIngressCertificate())) : [];
      const hopArgs = hop === undefined ? [] : proxyExtprocTlsFlags(hop);
      const egressArgs = spec.egress === true ? [...(await this.egressFixtures([])).proxyArgs(), '--egress-cache-ttl-ms', String(cfg.cacheTtlMs)] : [];
      const args = [...proxyArgs(cfg, spec, extprocGrpc, this.grpc), ...(tls === undefined ? [] : tlsFlags('proxy', tls)), ...hopArgs, ...serving, ...egressArgs];
      const proxy = await group.add(
        build === undefined
          ? launchComponent('proxy', args, { ...opts, nodeArgs })
          : launch('proxy', build.cliScript, ['proxy', ...args], { ...opts, keepLines: 40, nodeArgs: [...build.nodeArgs, ...nodeArgs] }),
      );
      probes.unshift({ component: 'proxy', kind: 'proxy', admin: new Admin(proxy.addresses['admin'] as string) });
      probes.push(stubProbe);
      return {
        spec,
        url: spec.egress === true ? `https://${proxy.addresses['egress']}` : spec.transport?.tls ? `https://${proxy.addresses['tls']}` : `http://${proxy.addresses['ingress']}`,
        probes,
        ...(profileDir === undefined ? {} : { profileDir }),
        stop: () => group.stopAll(),
      };
    });
  }

  async stop(): Promise<void> {
    const mtls = this.#mtlsStack;
    this.#mtlsStack = undefined;
    const cert = this.#ingressCert;
    this.#ingressCert = undefined;
    const hop = this.#hopCerts;
    this.#hopCerts = undefined;
    const egress = this.#egress;
    this.#egress = undefined;
    await Promise.all([
      this.stub.stop(),
      mtls?.then((s) => s.stop(), () => undefined),
      cert?.then((c) => c.remove(), () => undefined),
      hop?.then((c) => c.remove(), () => undefined),
      egress?.then((e) => e.remove(), () => undefined),
      this.#traceSink?.close(),
    ]);
    await this.certs?.remove();
  }
}

/** The apiserver-stub flags every bench stack shares (the actors, their latencies, the worker port). */
export function stubArgs(config: BenchConfig, workerPort: number): string[] {
  return [
    '--listen', '127.0.0.1:0',
    '--admin', '127.0.0.1:0',
    '--worker-port', String(workerPort),
    '--actors', String(config.actors),
    '--atespace', config.atespace,
    '--resolve-latency-ms', String(config.resolveLatencyMs),
    // GetActor and GetActorEgressPolicy (the egress slow path) cost the same as a warm resolve
    '--read-latency-ms', String(config.resolveLatencyMs),
    '--cold-resume-ms', String(config.coldResumeMs),
    '--actor-suffix', config.actorSuffix,
  ];
}

/** The proxy of a proxy arm, as the bench runs it (access log off; the worker port comes from PROXY_WORKER_PORT). */
export function proxyArgs(cfg: BenchConfig, spec: ArmSpec, extprocGrpc: string, apiserverGrpc: string): string[] {
  return [
    '--listen', '127.0.0.1:0',
    '--admin', '127.0.0.1:0',
    ...wiringFlags('proxy', { extproc: extprocGrpc }),
    '--apiserver', apiserverGrpc,
    '--access-log', 'off',
    '--cache-ttl-ms', String(cfg.cacheTtlMs),
    '--cache-max-entries', String(cfg.cacheMaxEntries),
    '--actor-suffix', cfg.actorSuffix,
    ...(cfg.proxyWorkers > 1 ? ['--workers', String(cfg.proxyWorkers)] : []),
    ...spec.proxyFlags,
  ];
}

/** One stub admin call on an actor (`suspend`, `resume`, `move`). */
export async function actorCall(stub: Admin, atespace: string, name: string, verb: 'suspend' | 'resume' | 'move'): Promise<void> {
  await stub.post(`/actors/${encodeURIComponent(atespace)}/${encodeURIComponent(name)}/${verb}`);
}

/**
 * `--target` with `--stub-admin`: the deployment's stub gets the bench's run-time latencies and every actor of the
 * run is woken, so the target starts where the built-in arms start (same stub settings, same hot actors).
 */
export async function prepareTarget(config: BenchConfig, actors: readonly string[]): Promise<void> {
  if (!config.stubAdmin) return;
  const stub = new Admin(config.stubAdmin);
  await stub.put('/config', { resolveLatencyMs: config.resolveLatencyMs, coldResumeMs: config.coldResumeMs });
  await forEachLimited(actors, 32, (name) => actorCall(stub, config.atespace, name, 'resume'));
}

/** Node flags that make a process write a CPU profile into `dir` when it exits. */
function profileArgs(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** The floor's Host → worker table: every running actor's Host (as the load sends it) to its worker, as the stub placed it. */
export function floorRoutes(cfg: BenchConfig, placements: readonly ActorPlacement[], workerPort: number): Record<string, string> {
  const running = placements.filter((p) => p.workerIp && p.status === 'RUNNING');
  const hosts = hostsOf(cfg, running.map((p) => p.name));
  return Object.fromEntries(running.map((p, i) => [hosts[i] as string, `${p.workerIp}:${workerPort}`]));
}

/** Probes for --target mode: whatever admin URLs were given. */
export function targetProbes(config: BenchConfig): Probe[] {
  const probes: Probe[] = [];
  if (config.targetAdmin) probes.push({ component: 'proxy', kind: 'proxy', admin: new Admin(config.targetAdmin) });
  if (config.extprocAdmin) probes.push({ component: 'extproc', kind: 'extproc', admin: new Admin(config.extprocAdmin) });
  if (config.stubAdmin) probes.push({ component: 'apiserver-stub', kind: 'stub', admin: new Admin(config.stubAdmin) });
  return probes;
}
