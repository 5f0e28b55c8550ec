/** `actor-edge apiserver-stub`: the simulated control plane with its in-process workers. */
import { componentStart } from '../lib/component-start.js';
import { logReady } from '../lib/logger.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { readStubConfig, stubHelp } from './config.js';
import { startApiserverStub } from './stub.js';

export async function main(argv: string[]): Promise<void> {
  const start = componentStart('apiserver-stub', readStubConfig(argv), stubHelp);
  if (start === undefined) return;
  const { config, log } = start;
  const stub = await startApiserverStub(config, log);
  onShutdownSignal(log, () => stub.close());
  log.info({ workers: stub.workerAddresses, capacity: config.workerCapacity }, 'in-process workers listening');
  log.info({ atespace: config.atespace, actors: config.actors, resolveLatencyMs: config.resolveLatencyMs, coldResumeMs: config.coldResumeMs }, 'actors seeded');
  logReady(log, stub.addresses);
}
