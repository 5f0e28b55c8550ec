/**
 * The filter worker pool's tallies and their one declaration (`OFFLOAD_STATS`: the `/stats` `filterOffload` block
 * and its metrics): calls by where they ran, results dropped as stale, calls that failed, and the pool's size and
 * queue now. Tallies count since the last
 * `POST /stats/reset`; the workers and the backlog are levels (now).
 */
import { SinceReset, type Tallies } from '../../../lib/since-reset.js';
import { declare, type StatsOf } from '../../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../../lib/stats/derive.js';

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

/** What the declarations read: the tallies (since the last reset for `/stats`, lifetime for `/metrics`) and the pool now. */
export interface OffloadView {
  readonly counts: Tallies<OffloadTallies>;
  readonly pool: OffloadPoolView;
}

/**
 * The `/stats` `filterOffload` block and its `actor_edge_proxy_filter_offload_…` metrics, declared once
 * (lib/stats/declare.ts). The latency histogram is observed as calls settle (offload-metrics.ts).
 */
export const OFFLOAD_STATS = declare<OffloadView>()({
  filterOffload: {
    workers: {
      configured: { kind: 'stat', help: '--filter-workers.', read: (v) => v.pool.config.workers },
      running: {
        kind: 'gauge',
        name: 'filter_offload_workers',
        help: 'Worker threads of the filter pool running now (--filter-workers; 0: no pool).',
        read: (v) => v.pool.workers,
      },
    },
    backlog: {
      waiting: {
        kind: 'gauge',
        name: 'filter_offload_backlog',
        help: 'Offloaded filter calls waiting for a worker thread now (--filter-backlog bounds them).',
        read: (v) => v.pool.backlog,
      },
      limit: { kind: 'stat', help: '--filter-backlog.', read: (v) => v.pool.config.backlog },
    },
    calls: {
      pool: { kind: 'stat', help: 'Offloaded filter calls run on a worker thread.', read: (v) => v.counts.calls.pool },
      inline: {
        kind: 'counter',
        name: 'filter_offload_inline_total',
        help: 'Offloaded filter calls run inline on the event loop: every call with --filter-workers 0, else those that found the queue full.',
        read: (v) => v.counts.calls.inline,
      },
    },
    stale: {
      kind: 'counter',
      help: 'Offloaded filter results dropped because their request no longer waited (the client left, the filter timed out).',
      read: (v) => v.counts.stale,
    },
    errors: { kind: 'counter', help: 'Offloaded filter calls that threw, or whose worker thread died (each fails its own request: 500).', read: (v) => v.counts.errors },
  },
});

/** The `filterOffload` block of `/stats`. */
export type OffloadStatsBlock = StatsOf<typeof OFFLOAD_STATS>['filterOffload'];

/** The pool's two views: since the last reset (`/stats`) and lifetime (`/metrics`). */
export class OffloadStats implements StatsSource<OffloadView> {
  readonly #since: SinceReset<OffloadTallies>;

  constructor(private readonly pool: OffloadPoolView) {
    this.#since = new SinceReset(() => pool.tallies);
  }

  sinceReset(): OffloadView {
    return { counts: this.#since.current(), pool: this.pool };
  }

  lifetime(): OffloadView {
    return { counts: this.pool.tallies, pool: this.pool };
  }

  snapshot(): OffloadStatsBlock {
    return statsBlock(OFFLOAD_STATS, this.sinceReset()).filterOffload;
  }

  reset(): void {
    this.#since.reset();
  }
}
