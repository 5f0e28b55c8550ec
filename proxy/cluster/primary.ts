/**
 * `--workers N`: a node:cluster primary and N proxy processes sharing the ingress listener. Each worker runs the
 * whole chain (`worker.ts`); the primary supervises them (`supervisor.ts`), relays the binding table's learn and
 * evict events between them (`binding-relay.ts`), owns the public admin listener and fans admin calls out to them
 * (`admin-fanout.ts`), on SIGHUP has every worker reload its filters, and on SIGTERM drains every worker
 * (`drain.ts`), then exits.
 */
import { logReady, type Logger } from '../../lib/logger.js';
import { boundAddress } from '../../lib/address.js';
import { onShutdownSignal } from '../../lib/shutdown.js';
import type { ProxyConfig } from '../config.js';
import { WorkerSupervisor, type WorkerInfo } from './supervisor.js';
import { createPrimaryAdmin, reloadWorkers } from './admin-fanout.js';
import { relayBindings } from './binding-relay.js';

/** How long after a worker's own drain timeout the primary stops waiting and kills it. */
const KILL_GRACE_MS = 5000;

export async function runClusterPrimary(config: ProxyConfig, log: Logger): Promise<void> {
  const workers = new WorkerSupervisor(config.workers, log);
  relayBindings();
  await workers.start();
  const admin = createPrimaryAdmin(workers, { adminToken: config.ops.adminToken, log });
  await admin.listen({ host: config.ops.admin.host, port: config.ops.admin.port });
  const first = workers.live()[0] as WorkerInfo;
  // SIGHUP: every worker reloads its filters, through the same admin call as `POST /filters/reload`.
  process.on('SIGHUP', () => {
    reloadWorkers(workers, config.ops.adminToken).then(
      ({ status, body }) => (status === 200 ? log.info(body, 'filters reloaded on every worker') : log.error(body, 'filter reload failed')),
      (err: unknown) => log.error({ err }, 'filter reload failed'),
    );
  });
  onShutdownSignal(log, async () => {
    await workers.drain(config.ops.drainTimeoutMs + KILL_GRACE_MS, config.ops.drainDelayMs);
    await admin.close();
  });
  logReady(log, {
    ingress: first.ingress as string,
    ...(first.tls === undefined ? {} : { tls: first.tls }),
    admin: boundAddress(admin.server),
    ...(first.connect === undefined ? {} : { connect: first.connect }),
    ...(first.connectTls === undefined ? {} : { connectTls: first.connectTls }),
    workers: String(config.workers),
  });
}
