/**
 * A fleet of proxy replicas behind HAProxy, on loopback: each replica its own `actor-edge proxy` process with its
 * own cache, ingress, HTTPS (in `sni` mode) and admin ports, all sharing one extproc and one control plane; HAProxy
 * (`haproxy-main.ts`, configuration from `haproxy-config.ts` in a private temporary directory) in front. Used by
 * `npm run fleet` and the benchmark's fleet scenario, which also break it: SIGKILL a replica, restart each in turn
 * (SIGTERM: /ready fails, the replica keeps serving for `--drain-delay-ms` while HAProxy's checks take it out,
 * then drains and exits), and add one under load (a slot declared `disabled`, enabled through the runtime API).
 *
 * Every replica keeps its ports for the fleet's life (chosen free at the start), so HAProxy's configuration never
 * changes: a restarted replica comes back where HAProxy expects it.
 */
import { wiringFlags } from '../stack/wiring.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchComponent } from '../../cli/launch-component.js';
import { formatHostPort, type HostPort } from '../../lib/address.js';
import { launch, type Launched, type LaunchOptions } from '../../lib/launch.js';
import { freePort } from '../../lib/loopback.js';
import { DevCa } from '../../lib/tls/dev-ca.js';
import { haproxyConfig, PLAN_DEFAULTS, type FleetMode, type HaproxyPlan } from './haproxy-config.js';
import { HaproxyRuntime, isUp } from './haproxy-runtime.js';

export const HAPROXY_MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'haproxy-main.js');

const LOOPBACK = '127.0.0.1';

/** What the replicas talk to: the control plane (and its workers' port) and extproc. */
export interface FleetBackends {
  readonly apiserverGrpc: string;
  readonly extprocGrpc: string;
  readonly workerPort: number;
}

export interface FleetOptions {
  readonly mode: FleetMode;
  /** Replicas started at once. */
  readonly replicas: number;
  /** Slots HAProxy knows (the rest `disabled`, room to scale up); at least `replicas`. */
  readonly slots: number;
  readonly backends: FleetBackends;
  /** Flags every replica gets besides the fleet's own (cache TTL, access log, ...). */
  readonly proxyFlags?: readonly string[];
  /** Environment every replica gets, e.g. the mTLS bundles of the ext_proc and worker hops (`scripts/stack/tls.ts`). */
  readonly env?: NodeJS.ProcessEnv;
  /** `--drain-delay-ms` of every replica: longer than HAProxy takes to mark a failing `/ready` down. */
  readonly drainDelayMs: number;
  /** The frontend's port (0: a free one). */
  readonly port?: number;
  /** Also serve HAProxy's HTML stats page on a free loopback port. */
  readonly statsPage?: boolean;
  /** HAProxy logs every request (or connection, `sni`) to its output. */
  readonly haproxyLog?: boolean;
  /** `hash-balance-factor` of the hashing modes (default `PLAN_DEFAULTS`). */
  readonly hashBalanceFactor?: number;
  /** Actor hosts are `<name>.<atespace>.<suffix>`: the `sni` mode's certificate covers `*.<atespace>.<suffix>`. */
  readonly atespace: string;
  readonly actorSuffix: string;
  /** Copy every process's output to stderr. */
  readonly echo?: boolean;
  /** Called with every output line of every process (`npm run fleet` shows them). */
  readonly onLine?: (label: string, line: string) => void;
}

export interface ReplicaSlot {
  /** `r1`, `r2`, ... (HAProxy's server name; the id is the number). */
  readonly name: string;
  readonly id: number;
  readonly ingress: HostPort;
  /** The HTTPS listener (`sni` mode only). */
  readonly tls: HostPort | undefined;
  readonly admin: HostPort;
  /** The running process, if any. */
  process: Launched | undefined;
}

/** HAProxy's health checks: inter × fall is how long a failing replica keeps receiving new requests. */
export function detectionMs(): number {
  const h = PLAN_DEFAULTS.health;
  return h.interMs * (h.fall + 1);
}

const hostPort = (port: number): HostPort => ({ host: LOOPBACK, port });

export class Fleet {
  readonly runtime: HaproxyRuntime;
  readonly frontend: HostPort;

  private constructor(
    readonly opts: FleetOptions,
    readonly slots: readonly ReplicaSlot[],
    readonly dir: string,
    private haproxy: Launched,
    readonly statsPage: HostPort | undefined,
    private readonly certificate: string | undefined,
  ) {
    this.runtime = new HaproxyRuntime(path.join(dir, 'haproxy.sock'));
    this.frontend = haproxy.addresses['frontend'] === undefined ? hostPort(0) : parseAddress(haproxy.addresses['frontend']);
  }

  /** Starts the replicas, then HAProxy, and waits until HAProxy sees every started replica up. */
  static async start(opts: FleetOptions): Promise<Fleet> {
    if (opts.replicas < 1 || opts.slots < opts.replicas) throw new Error(`fleet: ${opts.replicas} replicas in ${opts.slots} slots`);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-fleet-'));
    const slots: ReplicaSlot[] = [];
    try {
      for (let i = 1; i <= opts.slots; i++) {
        slots.push({
          name: `r${i}`,
          id: i,
          ingress: hostPort(await freePort()),
          tls: opts.mode === 'sni' ? hostPort(await freePort()) : undefined,
          admin: hostPort(await freePort()),
          process: undefined,
        });
      }
      const certificate = opts.mode === 'sni' ? await writeWildcardCertificate(dir, opts) : undefined;
      const starting = slots.slice(0, opts.replicas).map((s) => startReplica(opts, s, certificate));
      await Promise.all(starting);
      const socket = path.join(dir, 'haproxy.sock');
      const plan: HaproxyPlan = {
        ...PLAN_DEFAULTS,
        mode: opts.mode,
        listen: hostPort(opts.port !== undefined && opts.port > 0 ? opts.port : await freePort()),
        statsSocket: socket,
        ...(opts.statsPage ? { statsPage: hostPort(await freePort()) } : {}),
        ...(opts.haproxyLog ? { log: true } : {}),
        ...(opts.hashBalanceFactor === undefined ? {} : { hashBalanceFactor: opts.hashBalanceFactor }),
        servers: slots.map((s, i) => ({ name: s.name, id: s.id, address: s.tls ?? s.ingress, checkPort: s.admin.port, enabled: i < opts.replicas })),
      };
      const configFile = path.join(dir, 'haproxy.cfg');
      await writeFile(configFile, haproxyConfig(plan));
      const haproxy = await launch('haproxy', HAPROXY_MAIN, ['--config', configFile, '--socket', socket, '--frontend', formatHostPort(plan.listen.host, plan.listen.port)], launchOptions(opts, 'haproxy'));
      const fleet = new Fleet(opts, slots, dir, haproxy, plan.statsPage, certificate);
      const expected = slots.slice(0, opts.replicas).map((s) => s.name);
      await fleet.runtime.waitFor(`${expected.join(', ')} up`, (all) => expected.every((n) => all.some((s) => s.name === n && isUp(s))));
      return fleet;
    } catch (err) {
      await Promise.all(slots.map((s) => s.process?.kill()));
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The CA that signed the `sni` mode's serving certificate (for clients that verify it). */
  get caFile(): string | undefined {
    return this.certificate === undefined ? undefined : path.join(this.dir, 'ca', 'ca.pem');
  }

  /** Where clients connect: `http://…` (HTTP modes) or `https://…` (`sni`: TLS passes through to a replica). */
  get url(): string {
    return `${this.opts.mode === 'sni' ? 'https' : 'http'}://${formatHostPort(this.frontend.host, this.frontend.port)}`;
  }

  /** Replicas with a running process. */
  running(): ReplicaSlot[] {
    return this.slots.filter((s) => s.process?.running === true);
  }

  slot(name: string): ReplicaSlot {
    const s = this.slots.find((x) => x.name === name);
    if (s === undefined) throw new Error(`fleet: no replica ${name}`);
    return s;
  }

  adminUrl(slot: ReplicaSlot): string {
    return `http://${formatHostPort(slot.admin.host, slot.admin.port)}`;
  }

  /** SIGKILL to a replica's process group; resolves once it is gone (HAProxy finds out by itself). */
  async kill(name: string): Promise<void> {
    await this.slot(name).process?.kill();
  }

  /**
   * Graceful stop (SIGTERM): the replica fails `/ready`, serves on for its drain delay, drains and exits;
   * resolves once it exited (it is killed if it takes longer than `graceMs`).
   */
  async terminate(name: string, graceMs = 30_000): Promise<void> {
    await this.slot(name).process?.terminate(graceMs);
  }

  /** Starts a replica's process again on its ports; resolves once it is ready and HAProxy sees it up. */
  async restart(name: string): Promise<void> {
    const s = this.slot(name);
    if (s.process?.running) throw new Error(`fleet: ${name} is running`);
    await startReplica(this.opts, s, this.certificate);
    await this.runtime.waitServer(name, true);
  }

  /** Restarts every running replica in turn: SIGTERM, wait for its exit, start it again, wait until it is up. */
  async rollingRestart(onEach?: (name: string) => void): Promise<void> {
    for (const s of this.running()) {
      onEach?.(s.name);
      await this.terminate(s.name);
      await this.restart(s.name);
    }
  }

  /** Starts the first unused slot's replica and brings it into HAProxy; resolves with it once it is up. */
  async scaleUp(): Promise<ReplicaSlot> {
    const s = this.slots.find((x) => x.process === undefined);
    if (s === undefined) throw new Error(`fleet: all ${this.slots.length} slots are in use`);
    await startReplica(this.opts, s, this.certificate);
    await this.runtime.enable(s.name);
    await this.runtime.waitServer(s.name, true);
    return s;
  }

  /** Stops HAProxy, then every replica; removes the temporary directory. */
  async stop(): Promise<void> {
    await this.haproxy.stop();
    await Promise.all(this.slots.map((s) => s.process?.stop()));
    await rm(this.dir, { recursive: true, force: true });
  }
}

function parseAddress(text: string): HostPort {
  const i = text.lastIndexOf(':');
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(text.slice(i + 1)) };
}

function launchOptions(opts: FleetOptions, label: string): LaunchOptions {
  return {
    keepLines: 40,
    ...(opts.echo === undefined ? {} : { echo: opts.echo }),
    ...(opts.onLine === undefined ? {} : { onLine: (line: string) => opts.onLine?.(label, line) }),
  };
}

/** The flags of one replica: its own ports, one trusted hop (HAProxy), the drain delay; `sni`: HTTPS and the 421. */
export function replicaArgs(opts: FleetOptions, slot: ReplicaSlot, certificate: string | undefined): string[] {
  const tls =
    slot.tls === undefined || certificate === undefined
      ? []
      : ['--tls-listen', formatHostPort(slot.tls.host, slot.tls.port), '--tls-cert', certificate, '--tls-key', certificate, '--misdirected-421', 'on'];
  return [
    '--listen', formatHostPort(slot.ingress.host, slot.ingress.port),
    '--admin', formatHostPort(slot.admin.host, slot.admin.port),
    ...wiringFlags('proxy', { extproc: opts.backends.extprocGrpc }),
    '--apiserver', opts.backends.apiserverGrpc,
    '--worker-port', String(opts.backends.workerPort),
    '--actor-suffix', opts.actorSuffix,
    '--xff-trusted-hops', '1',
    '--drain-delay-ms', String(opts.drainDelayMs),
    ...tls,
    ...(opts.proxyFlags ?? []),
  ];
}

async function startReplica(opts: FleetOptions, slot: ReplicaSlot, certificate: string | undefined): Promise<void> {
  slot.process = await launchComponent('proxy', replicaArgs(opts, slot, certificate), {
    ...launchOptions(opts, slot.name),
    env: { ...opts.env, PROXY_WORKER_PORT: String(opts.backends.workerPort) },
  });
}

/** A throw-away CA and one serving certificate (chain and key in one file) for every actor: `*.<atespace>.<suffix>`. */
async function writeWildcardCertificate(dir: string, opts: FleetOptions): Promise<string> {
  const ca = await DevCa.create(path.join(dir, 'ca'), { days: 1, commonName: 'actor-edge fleet CA' });
  return ca.issue({ name: 'ingress', commonName: `*.${opts.atespace}.${opts.actorSuffix}`, dnsNames: [`*.${opts.atespace}.${opts.actorSuffix}`, 'localhost'], usage: 'server', days: 1 }, dir);
}
