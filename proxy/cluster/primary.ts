/**
 * `--workers N`: a node:cluster primary and N proxy processes sharing the ingress listener. Each worker runs the
 * whole chain (`worker.ts`); the primary supervises them (`supervisor.ts`), relays the events of the tables they share
 * (actor bindings, egress verdicts) between them (`shared-table-relay.ts`), owns the public admin listener and fans admin calls out to them
 * (`admin-fanout.ts`), on SIGHUP has every worker reload its filters, on SIGUSR1 every process reopen its access-log file, and on SIGTERM drains every worker
 * (`drain.ts`), then exits.
 */
import cluster from 'node:cluster';
import { logReady, type Logger } from '../../lib/logger.js';
import { AccessLog } from '../ops/access-log.js';
import { boundAddress } from '../../lib/address.js';
import { onShutdownSignal } from '../../lib/shutdown.js';
import { PROXY_FLAGS, type ProxyConfig } from '../config.js';
import { assertFree, listening, settingOf } from '../../lib/listen-error.js';
import type { HostPort } from '../../lib/address.js';
import { WorkerSupervisor, type WorkerInfo } from './supervisor.js';
import { createPrimaryAdmin, reloadWorkers } from './admin-fanout.js';
import { relaySharedTables } from './shared-table-relay.js';

/** How long after a worker's own drain timeout the primary stops waiting and kills it. */
const KILL_GRACE_MS = 5000;

export async function runClusterPrimary(config: Pick<ProxyConfig, 'workers' | 'ops' | 'listeners'>, log: Logger): Promise<void> {
  // Every worker binds the same client listeners, through this process: a taken port is told once, here, in one
  // line, before any worker starts (the primary's own admin port too).
  await assertListenersFree(config);
  const workers = new WorkerSupervisor(config.workers, log);
  relaySharedTables();
  await workers.start();
  // The primary's own access-log stream carries the admin calls it serves (the workers write their requests' lines).
  const accessLog = new AccessLog(config.ops.accessLog);
  const admin = createPrimaryAdmin(workers, { adminToken: config.ops.adminToken, log, accessLog });
  const { host, port } = config.ops.admin;
  await listening('proxy', host, port, settingOf(PROXY_FLAGS, 'admin'), () => admin.listen({ host, port }));
  const first = workers.live()[0] as WorkerInfo;
  // SIGHUP: every worker reloads its filters, through the same admin call as `POST /filters/reload`.
  process.on('SIGHUP', () => {
    reloadWorkers(workers, config.ops.adminToken).then(
      ({ status, body }) => (status === 200 ? log.info(body, 'filters reloaded on every worker') : log.error(body, 'filter reload failed')),
      (err: unknown) => log.error({ err }, 'filter reload failed'),
    );
  });
  // SIGUSR1 (log rotation): every process opens the access-log file again.
  process.on('SIGUSR1', () => {
    accessLog.reopen();
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGUSR1');
  });
  onShutdownSignal(log, async () => {
    await workers.drain(config.ops.drainTimeoutMs + KILL_GRACE_MS, config.ops.drainDelayMs);
    await admin.close();
    accessLog.close();
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

async function assertListenersFree(config: Pick<ProxyConfig, 'ops' | 'listeners'>): Promise<void> {
  const { listen, tls, connect, connectTls } = config.listeners;
  const binds: [string, HostPort | undefined][] = [
    ['listen', listen],
    ['tls-listen', tls?.listen],
    ['connect-listen', connect],
    ['connect-tls-listen', connectTls?.listen],
    ['admin', config.ops.admin],
  ];
  for (const [flag, at] of binds) if (at !== undefined) await assertFree('proxy', at.host, at.port, settingOf(PROXY_FLAGS, flag));
}
