/**
 * What one refresh-ahead re-validation costs the proxy process: the proxy's own ext_proc client and revalidator
 * (`stages/ext-proc/revalidate.ts`, one `Process` stream per refresh, as arm C runs them) against a real extproc
 * and apiserver-stub started as their own processes, `--refreshes` re-validations one after another after a
 * warm-up; the CPU of this process (the proxy's side only) per re-validation, and the wall time of each.
 *
 * Arm C's steady load re-validates every actor in use once per cache TTL (50 actors, TTL 5 s: 10 a second), so this
 * is the part of C's CPU per request that the floor's static table never pays: refreshes per second × this ÷ requests
 * per second.
 *
 * `node dist/bench/refresh-cost.js [--refreshes 2000] [--actors 50]`
 */
import { wiringFlags } from '../scripts/stack/wiring.js';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createLogger } from '../lib/logger.js';
import { GrpcExtProcClient } from '../proxy/stages/ext-proc/grpc-client.js';
import { createExtProcRevalidator } from '../proxy/stages/ext-proc/revalidate.js';
import { Counters } from '../proxy/ops/stats.js';
import { DEFAULT_ACTOR_SUFFIX } from '../lib/actor-ref.js';
import { resumeAll } from './control.js';
import { launchComponent, LaunchGroup } from './launcher.js';

export interface RefreshCost {
  readonly refreshes: number;
  readonly node: string;
  /** This process's CPU (user + system) per re-validation, µs. */
  readonly cpuUsPerRefresh: number;
  readonly userUsPerRefresh: number;
  /** Wall time per re-validation (one at a time), µs. */
  readonly wallUsPerRefresh: number;
}

const ATESPACE = 'demo';
/** Re-validations before the measured ones (the channel connected, the code warm). */
const WARM_UP = 300;

function actorName(i: number): string {
  return `actor-${String(i).padStart(3, '0')}`;
}

export async function measureRefreshCost(refreshes: number, actors: number, warmUp = WARM_UP): Promise<RefreshCost> {
  return LaunchGroup.build(async (group) => {
    const stub = await group.add(
      launchComponent('apiserver-stub', ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--actors', String(actors), '--atespace', ATESPACE, '--resolve-latency-ms', '0']),
    );
    const grpc = stub.addresses['grpc'] as string;
    await resumeAll(grpc, ATESPACE, Array.from({ length: actors }, (_, i) => actorName(i)));
    const extproc = await group.add(launchComponent('extproc', ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver: grpc })]));
    // The proxy's own client, as its ext-proc stage makes it (its plaintext warning is not this tool's news).
    const client = new GrpcExtProcClient({ address: extproc.addresses['grpc'] as string, messageTimeoutMs: 5000, counters: new Counters(), log: createLogger('refresh-cost', 'error') });
    let result: RefreshCost;
    try {
      const revalidator = createExtProcRevalidator(client, { allowed: [], disallowed: [] });
      const signal = new AbortController().signal;
      const run = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) {
          const authority = `${actorName(i % actors)}.${ATESPACE}.${DEFAULT_ACTOR_SUFFIX}`;
          const answer = await revalidator.revalidate({ authority, scheme: 'http' }, signal);
          if (answer.kind !== 'routed') throw new Error(`refresh of ${authority} failed: ${answer.reason}`);
        }
      };
      await run(warmUp);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await run(refreshes);
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - t0;
      result = {
        refreshes,
        node: process.version,
        cpuUsPerRefresh: (cpu.user + cpu.system) / refreshes,
        userUsPerRefresh: cpu.user / refreshes,
        wallUsPerRefresh: (wallMs * 1000) / refreshes,
      };
    } finally {
      client.close();
    }
    await group.stopAll();
    return result;
  });
}

export function renderRefreshCost(r: RefreshCost): string {
  return [
    '| re-validations | Node | proxy-side CPU µs each | of which user | wall µs each |',
    '|---:|---|---:|---:|---:|',
    `| ${r.refreshes.toLocaleString('en-US')} | ${r.node} | ${r.cpuUsPerRefresh.toFixed(0)} | ${r.userUsPerRefresh.toFixed(0)} | ${r.wallUsPerRefresh.toFixed(0)} |`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { refreshes: { type: 'string', default: '2000' }, actors: { type: 'string', default: '50' } } });
  const r = await measureRefreshCost(Number(values.refreshes), Number(values.actors));
  process.stdout.write(renderRefreshCost(r) + '\n');
}
