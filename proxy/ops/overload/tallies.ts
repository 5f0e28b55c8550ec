/**
 * What the budgets and the overload manager count: the tallies `OVERLOAD_STATS` declares (counters.ts), plain
 * numbers created once from the declarations and bumped where the thing happens (the ingress, the listeners, the
 * ext-proc stage), read by `/stats` (since the last reset) and `/metrics` (lifetime). The levels (`…Open`,
 * `…Waiting`, `…InFlight`) are numbers of things now, reported as they are.
 */
import { overloadCountTallies, type OverloadCountTallies } from './counters.js';

/**
 * Why a request was answered 503 without being served, counted here: `overloadMiss` (`shed-misses` or above: a
 * request that needed the slow path), `overloadAll` (`shed-all`: any new request), `extprocQueueTimeout` (a miss that
 * waited its whole `--extproc-queue-timeout-ms`, or re-run budget, for a stream), `extprocQueueFull` (a miss that
 * found the ext_proc queue full). The budgets count their own refusals.
 */
export type ShedTallies = OverloadCountTallies['shed'];

export class OverloadTallies {
  /** Every tally of `OVERLOAD_STATS`, at its path below `overload` (`counts.extprocQueue.queued++`). */
  readonly counts: OverloadCountTallies = overloadCountTallies();
  /** Requests shed, by reason (`counts.shed`). */
  readonly shed: ShedTallies = this.counts.shed;
  /** Client connections closed as they were accepted: past `--max-connections`, or while overloaded (`counts.connections.refused`). */
  readonly connectionsRefused = this.counts.connections.refused;
  /** Level changes, by the level entered (`counts.transitions`). */
  readonly transitions = this.counts.transitions;
  /** Client connections open now (every client listener together). */
  connectionsOpen = 0;
  /** Misses waiting now in the ext_proc queue. */
  extprocQueueWaiting = 0;
  /** Misses holding one of the `--extproc-max-streams` slots now. */
  extprocStreamsInFlight = 0;

  /** Misses that had to wait in the ext_proc queue for a stream (`counts.extprocQueue.queued`). */
  get extprocQueued(): number {
    return this.counts.extprocQueue.queued;
  }
}
