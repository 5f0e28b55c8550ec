/** The admin /stats document (shape is a contract with the benchmark) and its reset. */
import { processStats, resetProcessStats } from '../lib/process-stats.js';
import { SinceReset } from '../lib/since-reset.js';
import type { Churn } from './churn.js';
import type { ControlPlane } from './control-plane.js';
import { workerView } from './messages.js';
import type { RpcCounters } from './rpc-counters.js';
import type { WorkerTlsCounters } from './worker/tls.js';

export class StubStats {
  private readonly store: SinceReset<{ deliveries: number; duplicates: number; placements: number }>;
  private readonly workerTls: SinceReset<WorkerTlsCounters> | undefined;

  constructor(
    private readonly cp: ControlPlane,
    private readonly counters: RpcCounters,
    private readonly churn: Churn,
    /** The in-process workers' mTLS handshakes (`workerTls` in the document, present only when they terminate mTLS). */
    workerTls?: WorkerTlsCounters,
  ) {
    const store = cp.store;
    this.store = new SinceReset(() => ({ deliveries: store.deliveries, duplicates: store.duplicates, placements: store.placements }));
    this.workerTls = workerTls === undefined ? undefined : new SinceReset(() => workerTls);
  }

  document() {
    const store = this.cp.store;
    const actors: Record<string, number> = {};
    for (const a of store.actors.values()) actors[a.status] = (actors[a.status] ?? 0) + 1;
    const workers: Record<string, ReturnType<typeof workerView>> = {};
    for (const w of store.workers.values()) workers[w.ip] = workerView(w);
    const since = this.store.current();
    return {
      rpc: this.counters.snapshot(),
      actors,
      egressPolicies: this.cp.egress.count(),
      workers,
      deliveries: { total: since.deliveries, duplicates: since.duplicates },
      placements: since.placements,
      churn: this.churn.status(),
      settings: { ...this.cp.settings },
      process: processStats(),
      ...(this.workerTls === undefined ? {} : { workerTls: this.workerTls.current() }),
    };
  }

  reset(): void {
    this.counters.reset();
    this.store.reset();
    this.workerTls?.reset();
    this.cp.store.resetStats();
    this.cp.moves = 0;
    this.churn.resetCounters();
    resetProcessStats();
  }
}
