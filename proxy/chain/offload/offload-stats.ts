/**
 * The filter worker pool's tallies and its `/stats` `filterOffload` block: calls by where they ran, results
 * dropped as stale, calls that failed, and the pool's size and queue now. Tallies count since the last
 * `POST /stats/reset`; the workers and the backlog are levels (now).
 */
import { SinceReset } from '../../../lib/since-reset.js';

/** Where an offloaded call ran: a worker thread, or the event loop (no pool, or its queue was full). */
export type OffloadPath = 'pool' | 'inline';

export class OffloadTallies {
  /** Calls by where they ran. */
  readonly calls = { pool: 0, inline: 0 };
  /** Calls whose request no longer waited when they settled (client gone, filter timed out): dropped. */
  stale = 0;
  /** Calls that threw, or whose worker thread died. */
  errors = 0;
  /** Each settled call's time from the call to its result (the metrics' histogram is plugged in here). */
  observeLatency: (path: OffloadPath, seconds: number) => void = () => undefined;
}

/** What the stats read of the pool now. */
export interface OffloadPoolView {
  readonly tallies: OffloadTallies;
  /** Worker threads running now (0: no pool). */
  readonly workers: number;
  /** Calls waiting for a worker now. */
  readonly backlog: number;
  /** `--filter-workers`, `--filter-backlog`. */
  readonly config: { readonly workers: number; readonly backlog: number };
}

export interface OffloadStatsBlock {
  /** `--filter-workers` and the threads running now (a dead one is being replaced when they differ). */
  readonly workers: { readonly configured: number; readonly running: number };
  /** Calls waiting for a worker now, and `--filter-backlog`. */
  readonly backlog: { readonly waiting: number; readonly limit: number };
  /** Calls by where they ran: `inline` counts every call with no pool, and the overflow of a full queue with one. */
  readonly calls: { readonly pool: number; readonly inline: number };
  readonly stale: number;
  readonly errors: number;
}

export class OffloadStats {
  readonly #since: SinceReset<OffloadTallies>;

  constructor(private readonly pool: OffloadPoolView) {
    this.#since = new SinceReset(() => pool.tallies);
  }

  snapshot(): OffloadStatsBlock {
    const t = this.#since.current();
    return {
      workers: { configured: this.pool.config.workers, running: this.pool.workers },
      backlog: { waiting: this.pool.backlog, limit: this.pool.config.backlog },
      calls: { pool: t.calls.pool, inline: t.calls.inline },
      stale: t.stale,
      errors: t.errors,
    };
  }

  reset(): void {
    this.#since.reset();
  }
}
