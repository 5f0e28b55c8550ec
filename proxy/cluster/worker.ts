/**
 * One node:cluster proxy worker: a whole proxy process (its own cache, pools and ext_proc channel) whose admin
 * server listens on an internal loopback port; it reports its addresses to the primary and drains when told to,
 * when the primary goes away, or on SIGTERM/SIGINT.
 */
import cluster from 'node:cluster';
import { createLogger } from '../../lib/logger.js';
import type { ProxyConfig } from '../config.js';
import { startProxyProcess, type AssembleStages } from '../proxy-process.js';
import { ACCEPTING_STOPPED, DRAIN, LISTENING, STOP_ACCEPTING, type ListeningMessage } from './messages.js';

export async function runClusterWorker(config: ProxyConfig, assemble: AssembleStages, rereadConfig?: () => ProxyConfig): Promise<void> {
  const log = createLogger('proxy').child({ worker: cluster.worker?.id });
  const running = await startProxyProcess(config, assemble, { role: 'worker', log, ...(rereadConfig ? { rereadConfig } : {}) });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'drain failed');
        process.exit(1);
      },
    );
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === STOP_ACCEPTING) {
      running.stopAccepting();
      process.send?.({ type: ACCEPTING_STOPPED });
    } else if (m?.type === DRAIN) stop();
  });
  process.on('disconnect', stop); // the primary is gone
  process.on('SIGTERM', stop);
  process.on('SIGHUP', () => void running.reload()); // the primary reloads through the admin; a stray HUP must not kill a worker
  process.on('SIGINT', stop);
  process.on('SIGUSR1', () => running.reopenAccessLog()); // log rotation, relayed by the primary
  const listening: ListeningMessage = {
    type: LISTENING,
    ingress: running.ingress,
    ...(running.tls === undefined ? {} : { tls: running.tls }),
    admin: running.admin,
    ...(running.connect === undefined ? {} : { connect: running.connect }),
    ...(running.connectTls === undefined ? {} : { connectTls: running.connectTls }),
    ...(running.egress === undefined ? {} : { egress: running.egress }),
  };
  process.send?.(listening);
}
