/**
 * The filter worker pool's counters, declared once (`OFFLOAD_STATS`: the `/stats` `filterOffload` block, its
 * metrics, and the tallies' storage): calls by where they ran, results dropped as stale, calls that failed, and the
 * pool's size and queue now. Tallies count since the last `POST /stats/reset` in `/stats`; the workers and the
 * backlog are levels (now).
 */
import { SinceReset } from '../../../lib/since-reset.js';
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../../lib/stats/derive.js';

/** Where an offloaded call ran: a worker thread, or the event loop (no pool, or its queue was full). */
export type OffloadPath = 'pool' | 'inline';

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

/**
 * What the declarations read: the tallies as `{ filterOffload: … }` (since the last reset for `/stats`, lifetime for
 * `/metrics`) and the pool now.
 */
export interface OffloadView {
  readonly tallies: object;
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
      pool: { kind: 'tally', exported: false, help: 'Offloaded filter calls run on a worker thread.' },
      inline: {
        kind: 'tally',
        name: 'filter_offload_inline_total',
        help: 'Offloaded filter calls run inline on the event loop: every call with --filter-workers 0, else those that found the queue full.',
      },
    },
    stale: { kind: 'tally', help: 'Offloaded filter results dropped because their request no longer waited (the client left, the filter timed out).' },
    errors: { kind: 'tally', help: 'Offloaded filter calls that threw, or whose worker thread died (each fails its own request: 500).' },
  },
});

/**
 * The pool's tallies, one number per tally of `OFFLOAD_STATS` (`calls.pool`, `calls.inline`, `stale`, `errors`),
 * and the hook each settled call's latency goes to (the metrics' histogram is plugged in here).
 */
export type OffloadTallies = TalliesOf<typeof OFFLOAD_STATS>['filterOffload'] & { observeLatency: (path: OffloadPath, seconds: number) => void };

export function offloadTallies(): OffloadTallies {
  return { ...talliesOf(OFFLOAD_STATS).filterOffload, observeLatency: () => undefined };
}

/** The `filterOffload` block of `/stats`. */
export type OffloadStatsBlock = StatsOf<typeof OFFLOAD_STATS>['filterOffload'];

/** The lifetime view of `pool` (`/metrics`). */
export function offloadLifetime(pool: OffloadPoolView): OffloadView {
  return { tallies: { filterOffload: pool.tallies }, pool };
}

/** The pool's two views: since the last reset (`/stats`) and lifetime (`/metrics`). */
export class OffloadStats implements StatsSource<OffloadView> {
  readonly #since: SinceReset<OffloadTallies>;

  constructor(private readonly pool: OffloadPoolView) {
    this.#since = new SinceReset(() => pool.tallies);
  }

  sinceReset(): OffloadView {
    return { tallies: { filterOffload: this.#since.current() }, pool: this.pool };
  }

  lifetime(): OffloadView {
    return offloadLifetime(this.pool);
  }

  snapshot(): OffloadStatsBlock {
    return statsBlock(OFFLOAD_STATS, this.sinceReset()).filterOffload;
  }

  reset(): void {
    this.#since.reset();
  }
}
