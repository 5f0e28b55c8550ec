/** `actor-edge worker`: one simulated worker process attached to apiserver-stub. */
import { componentStart } from '../lib/component-start.js';
import { logReady } from '../lib/logger.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { WorkerAgent } from './worker/agent.js';
import { readWorkerConfig, workerHelp } from './worker/config.js';
import { startWorkerTls } from './worker/tls.js';
import { watchCertificates } from '../lib/tls/expiry.js';

export async function main(argv: string[]): Promise<void> {
  const start = componentStart('worker', readWorkerConfig(argv), workerHelp);
  if (start === undefined) return;
  const { config, log } = start;
  const tls = config.tls === undefined ? undefined : startWorkerTls(config.tls, log);
  // No admin here: the expiry is logged only (the in-process workers' certificates are on apiserver-stub's /metrics).
  const certificateExpiry = watchCertificates(
    [
      { what: '--tls-credential-bundle', file: config.tls?.credentialBundle ?? '' },
      { what: '--tls-client-ca', file: config.tls?.clientCa ?? '' },
    ],
    { warningHours: config.certExpiryWarningHours, log },
  );
  const agent = new WorkerAgent({
    apiserver: config.apiserver,
    advertiseIp: config.advertiseIp,
    listenIp: config.listenIp,
    port: config.port,
    capacity: config.capacity,
    actorSuffix: config.actorSuffix,
    log,
    ...(tls === undefined ? {} : { tls }),
  });
  await agent.start();
  onShutdownSignal(log, async () => {
    await agent.close();
    tls?.close();
    certificateExpiry.close();
  });
  void agent.whenAttached().then(() => log.info({ apiserver: config.apiserver, advertiseIp: config.advertiseIp }, 'attached to control plane'));
  logReady(log, { http: agent.listener.address });
}
