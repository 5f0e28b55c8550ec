/** `actor-edge worker`: one simulated worker process attached to apiserver-stub. */
import { createLogger, logReady } from '../lib/logger.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { WorkerAgent } from './worker/agent.js';
import { readWorkerConfig, workerHelp } from './worker/config.js';

export async function main(argv: string[]): Promise<void> {
  const { help, config } = readWorkerConfig(argv);
  if (help || !config) {
    process.stdout.write(workerHelp());
    return;
  }
  const log = createLogger('worker');
  const agent = new WorkerAgent({
    apiserver: config.apiserver,
    advertiseIp: config.advertiseIp,
    listenIp: config.listenIp,
    port: config.port,
    capacity: config.capacity,
    actorSuffix: config.actorSuffix,
    log,
  });
  await agent.start();
  onShutdownSignal(log, () => agent.close());
  void agent.whenAttached().then(() => log.info({ apiserver: config.apiserver, advertiseIp: config.advertiseIp }, 'attached to control plane'));
  logReady(log, { http: agent.listener.address });
}
