/** The admin /stats document (shape is a contract with the benchmark) and its reset. */
import { processStats, resetProcessStats } from '../lib/process-stats.js';
import type { Churn } from './churn.js';
import type { ControlPlane } from './control-plane.js';
import { workerView } from './messages.js';
import type { RpcCounters } from './rpc-counters.js';
import type { WorkerTlsCounters } from './worker/tls.js';

/** `workerTls`: the in-process workers' mTLS handshakes (present only when they terminate mTLS). */
export function statsDocument(cp: ControlPlane, counters: RpcCounters, churn: Churn, workerTls?: WorkerTlsCounters) {
  const store = cp.store;
  const actors: Record<string, number> = {};
  for (const a of store.actors.values()) actors[a.status] = (actors[a.status] ?? 0) + 1;
  const workers: Record<string, ReturnType<typeof workerView>> = {};
  for (const w of store.workers.values()) workers[w.ip] = workerView(w);
  return {
    rpc: counters.snapshot(),
    actors,
    workers,
    deliveries: { total: store.deliveries, duplicates: store.duplicates },
    placements: store.placements,
    churn: churn.status(),
    settings: { ...cp.settings },
    process: processStats(),
    ...(workerTls === undefined ? {} : { workerTls: workerTls.snapshot() }),
  };
}

export function resetStats(cp: ControlPlane, counters: RpcCounters, churn: Churn): void {
  counters.reset();
  cp.store.resetStats();
  cp.moves = 0;
  churn.resetCounters();
  resetProcessStats();
}
