/**
 * The faults scenario's processes, one set per arm (a fault leaves the set changed): an apiserver-stub with no
 * in-process workers (seeding the load's actors and COLD_ACTORS more, suspended), N separate `actor-edge worker` processes that attach to it (each on its own loopback IP, so
 * one can be killed with SIGKILL), an extproc on a fixed port (so it can be restarted where the proxy expects
 * it), and the proxy under test.
 */
import { wiringFlags } from '../scripts/stack/wiring.js';
import { freePort, workerNet } from '../lib/loopback.js';
import { ipv4Add } from '../apiserver-stub/ip.js';
import { Admin, readActors, type ActorPlacement } from './admin.js';
import type { ArmSpec } from './arms.js';
import type { BenchConfig } from './config.js';
import { resumeAll } from './control.js';
import { launchComponent, LaunchGroup, type Launched } from './launcher.js';
import { proxyArgs, stubArgs, type ArmRuntime, type Probe } from './stack.js';

/**
 * Suspended actors seeded after the load's own, for the requests for cold actors during the outage phases
 * (`cold-misses.ts`): more than such requests in a run, so each one wakes an actor no request used before.
 */
export const COLD_ACTORS = 400;

/** The cold actors' names: the stub seeds them after the `actors` the load uses (same naming, three digits or more). */
export function coldActorNames(actors: number): string[] {
  const total = actors + COLD_ACTORS;
  const width = Math.max(3, String(total - 1).length);
  return Array.from({ length: COLD_ACTORS }, (_, i) => `actor-${String(actors + i).padStart(width, '0')}`);
}

export interface WorkerProcess {
  readonly ip: string;
  readonly process: Launched;
}

export interface FaultRuntime extends ArmRuntime {
  readonly kind: 'faults';
  readonly stubAdmin: Admin;
  readonly workers: readonly WorkerProcess[];
  /** Where each actor runs now. */
  placements(): Promise<ActorPlacement[]>;
  /** SIGKILL one worker process. */
  killWorker(ip: string): Promise<void>;
  /** Stops extproc and starts it again on the same address; resolves once the new one is ready. */
  restartExtproc(): Promise<void>;
}

export function isFaultRuntime(r: ArmRuntime): r is FaultRuntime {
  return (r as Partial<FaultRuntime>).kind === 'faults';
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`faults: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startFaultStack(config: BenchConfig, spec: ArmSpec, actors: readonly string[]): Promise<FaultRuntime> {
  if (spec.kind !== 'proxy') throw new Error(`faults: arm ${spec.name} is not a proxy arm`);
  const opts = { echo: config.echo };
  return LaunchGroup.build(async (group) => {
    const net = await workerNet();
    const stub = await group.add(launchComponent('apiserver-stub', [...stubArgs(config, net.port), '--workers', '0', '--actors', String(config.actors + COLD_ACTORS)], { ...opts, readyTimeoutMs: 60_000 }));
    const grpc = stub.addresses['grpc'] as string;
    const stubAdmin = new Admin(stub.addresses['admin'] as string);
    const workers: WorkerProcess[] = await Promise.all(
      Array.from({ length: config.workers }, async (_, i) => {
        const ip = ipv4Add(net.ipBase, i);
        const args = [...wiringFlags('worker', { apiserver: grpc }), '--advertise-ip', ip, '--worker-port', String(net.port), '--capacity', String(config.workerCapacity), '--actor-suffix', config.actorSuffix];
        return { ip, process: await group.add(launchComponent('worker', args, opts)) };
      }),
    );
    await waitUntil(
      'every worker process to attach',
      async () => {
        const w = (await stubAdmin.stats()) as { workers?: Record<string, { alive?: boolean }> };
        return workers.every((x) => w.workers?.[x.ip]?.alive === true);
      },
      30_000,
    );
    await resumeAll(grpc, config.atespace, actors);

    const extprocPort = await freePort();
    const extprocArgs = ['--listen', `127.0.0.1:${extprocPort}`, '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver: grpc, workerPort: net.port }), '--actor-suffix', config.actorSuffix];
    let extproc: Launched | undefined;
    const probes: Probe[] = [];
    if (spec.extproc) extproc = await group.add(launchComponent('extproc', extprocArgs, opts));
    const proxy = await group.add(launchComponent('proxy', proxyArgs(config, spec, `127.0.0.1:${extprocPort}`, grpc), { ...opts, env: { PROXY_WORKER_PORT: String(net.port) } }));
    probes.push({ component: 'proxy', kind: 'proxy', admin: new Admin(proxy.addresses['admin'] as string) });
    // extproc's own /stats would be lost at its restart: its streams are read from the proxy instead.
    probes.push({ component: 'apiserver-stub', kind: 'stub', admin: stubAdmin });
    return {
      kind: 'faults',
      spec,
      url: `http://${proxy.addresses['ingress']}`,
      probes,
      stubAdmin,
      workers,
      placements: async () => readActors(await stubAdmin.get('/actors')).filter((a) => a.atespace === config.atespace),
      async killWorker(ip) {
        const w = workers.find((x) => x.ip === ip);
        if (!w) throw new Error(`faults: no worker process ${ip}`);
        await w.process.kill();
      },
      async restartExtproc() {
        if (!extproc) return;
        await group.remove(extproc);
        extproc = await group.add(launchComponent('extproc', extprocArgs, opts));
      },
      stop: () => group.stopAll(),
    };
  });
}
