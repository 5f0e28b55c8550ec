/**
 * The `/stats` `overload` block, its metrics and its counters' storage, declared once (`OVERLOAD_STATS`): the state
 * and what set it, each monitor's reading and thresholds, the requests shed and connections refused by reason, the
 * client connections against `--max-connections`, the replay budget, and the ext_proc queue. A `kind: 'tally'` is
 * its own storage (`OverloadTallies.counts`, tallies.ts), so a new overload counter is its declaration and its `++`;
 * the budgets' counts are read from the budgets. Tallies count since the last `POST /stats/reset`; levels (open, in
 * use, waiting) are now.
 */
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../../lib/stats/declare.js';
import { LEVEL_NAMES, type LevelName, type OverloadLevel, type Readings, type Triggers } from './levels.js';

/** What the stats read of the replay budget (`request/replay-budget.ts`). */
export interface ReplayBudgetView {
  readonly capacity: number;
  readonly inUseBytes: number;
  readonly bodies: number;
  readonly streamedWithoutReplay: number;
  readonly bufferedRefused: number;
}

/** The ext_proc queue's limits (`--extproc-max-streams`, its queue bound, `--extproc-queue-timeout-ms`); 0 streams: no bound. */
export interface ExtProcQueueLimits {
  readonly maxStreams: number;
  readonly maxWaiting: number;
  readonly timeoutMs: number;
}

/** What the stats read of the body budget (`request/body-budget.ts`). */
export interface BodyBudgetView {
  readonly capacity: number;
  readonly inUseBytes: number;
  readonly bodies: number;
  readonly refused: number;
}

/** What the stats read of the overload manager (`manager.ts`): its state, readings, thresholds and levels now. */
export interface OverloadReadout {
  readonly level: OverloadLevel;
  readonly levelName: LevelName;
  readonly readings: Readings;
  readonly triggers: Triggers;
  readonly tallies: {
    /** The tallies of `OVERLOAD_STATS`, rooted at its `overload` block. */
    readonly counts: object;
    readonly connectionsOpen: number;
    readonly extprocQueueWaiting: number;
    readonly extprocStreamsInFlight: number;
  };
}

export interface OverloadSources {
  readonly manager: OverloadReadout;
  readonly budget: ReplayBudgetView;
  /** `--body-inflight-budget-bytes`. */
  readonly bodyBudget: BodyBudgetView;
  /** `--max-connections`. */
  readonly maxConnections: number;
  readonly extprocQueue: ExtProcQueueLimits;
}

/** The counts the budgets keep (`request/replay-budget.ts`, `request/body-budget.ts`), beside the tallies. */
export interface BudgetCounts {
  readonly streamed: number;
  readonly bufferedRefused: number;
  readonly bodyRefused: number;
}

/**
 * What the declarations read: the tallies as `{ overload: … }` and the budgets' counts (since the last reset for
 * `/stats`, lifetime for `/metrics`), and the sources now.
 */
export interface OverloadView {
  readonly tallies: object;
  readonly counts: BudgetCounts;
  readonly sources: OverloadSources;
}

/** A monitor's reading as `/stats` shows it: 3 decimals. */
const round3 = (n: number): number => Math.round(n * 1000) / 1000;

const LOOP_DELAY_THRESHOLD = {
  kind: 'gauge',
  name: 'overload_loop_delay_threshold_seconds',
  help: 'The event-loop delay at which the state goes to shed-misses (--overload-loop-delay-ms) and shed-all (--overload-loop-delay-critical-ms); 0: off.',
  divideBy: 1000,
  aggregator: 'first',
} as const;

const HEAP_THRESHOLD = {
  kind: 'gauge',
  name: 'overload_heap_threshold_bytes',
  help: 'The heap in use at which the state goes to shed-misses (--overload-heap-bytes) and shed-all (--overload-heap-critical-bytes); 0: off.',
  aggregator: 'first',
} as const;

const SHED = {
  kind: 'tally',
  name: 'shed_total',
  help: 'Requests answered 503 with Retry-After without being served, by reason: overload_miss (a miss at shed-misses), overload_all (any request at shed-all), extproc_queue_timeout, extproc_queue_full, replay_budget (a body that had to be read whole found the replay budget spent), body_budget (a request body found the budget of bodies in flight spent).',
} as const;

/**
 * The `/stats` `overload` block and its metrics, declared once (lib/stats/declare.ts). With `--workers N` the
 * primary merges the processes' metrics: the state and the readings by their maximum, the configured limits and
 * thresholds once, everything else summed.
 */
export const OVERLOAD_STATS = declare<OverloadView>()({
  overload: {
    state: { kind: 'stat', help: 'The overload state: normal, shed-misses or shed-all.', read: (v) => v.sources.manager.levelName },
    level: {
      kind: 'gauge',
      name: 'overload_state',
      help: 'The overload state: 0 normal, 1 shed-misses (misses and new connections refused), 2 shed-all (every new request refused).',
      aggregator: 'max',
      read: (v) => v.sources.manager.level,
    },
    transitions: { kind: 'tally', name: 'overload_transitions_total', label: 'state', keys: LEVEL_NAMES, help: 'Overload state changes, by the state entered.' },
    monitors: {
      loopDelayMs: {
        reading: {
          kind: 'gauge',
          name: 'overload_loop_delay_seconds',
          help: "The event-loop delay monitor's last reading: the mean delay over the last sampling interval (0 when both its thresholds are off).",
          divideBy: 1000,
          aggregator: 'max',
          read: (v) => v.sources.manager.readings.loopDelayMs,
          show: round3,
        },
        shedMisses: { ...LOOP_DELAY_THRESHOLD, labels: { state: 'shed-misses' }, read: (v) => v.sources.manager.triggers.loopDelayMs.shedMisses },
        shedAll: { ...LOOP_DELAY_THRESHOLD, labels: { state: 'shed-all' }, read: (v) => v.sources.manager.triggers.loopDelayMs.shedAll },
      },
      heapUsedBytes: {
        reading: {
          kind: 'gauge',
          name: 'overload_heap_used_bytes',
          help: "The heap monitor's last reading: the V8 heap in use (0 when both its thresholds are off).",
          aggregator: 'max',
          read: (v) => v.sources.manager.readings.heapUsedBytes,
          show: round3,
        },
        shedMisses: { ...HEAP_THRESHOLD, labels: { state: 'shed-misses' }, read: (v) => v.sources.manager.triggers.heapUsedBytes.shedMisses },
        shedAll: { ...HEAP_THRESHOLD, labels: { state: 'shed-all' }, read: (v) => v.sources.manager.triggers.heapUsedBytes.shedAll },
      },
    },
    shed: {
      overloadMiss: { ...SHED, labels: { reason: 'overload_miss' } },
      overloadAll: { ...SHED, labels: { reason: 'overload_all' } },
      extprocQueueTimeout: { ...SHED, labels: { reason: 'extproc_queue_timeout' } },
      extprocQueueFull: { ...SHED, labels: { reason: 'extproc_queue_full' } },
      replayBudget: { ...SHED, kind: 'counter', labels: { reason: 'replay_budget' }, read: (v) => v.counts.bufferedRefused },
      bodyBudget: { ...SHED, kind: 'counter', labels: { reason: 'body_budget' }, read: (v) => v.counts.bodyRefused },
    },
    connections: {
      open: {
        kind: 'gauge',
        name: 'connections_active',
        help: 'Client connections open now, every client listener together (the admin listener not counted).',
        read: (v) => v.sources.manager.tallies.connectionsOpen,
      },
      max: {
        kind: 'gauge',
        name: 'connections_limit',
        help: '--max-connections: client connections beyond it are closed at once (0: no limit).',
        aggregator: 'first',
        read: (v) => v.sources.maxConnections,
      },
      refused: {
        kind: 'tally',
        name: 'connections_refused_total',
        label: 'reason',
        keys: ['limit', 'overload'] as const,
        help: 'Client connections closed as they were accepted, by reason: limit (--max-connections open already), overload (shed-misses or shed-all).',
      },
    },
    replay: {
      budgetBytes: {
        kind: 'gauge',
        name: 'replay_budget_bytes',
        help: '--replay-buffer-budget-bytes: the most request-body bytes retained for replay at once (0: no budget).',
        aggregator: 'first',
        read: (v) => v.sources.budget.capacity,
      },
      inUseBytes: { kind: 'gauge', name: 'replay_buffer_bytes', help: 'Request-body bytes retained for replay now, every request together.', read: (v) => v.sources.budget.inUseBytes },
      bodies: { kind: 'stat', help: 'Request bodies retained for replay now.', read: (v) => v.sources.budget.bodies },
      streamedWithoutReplay: {
        kind: 'counter',
        name: 'replay_streamed_total',
        help: 'Request bodies that found the replay budget spent and streamed through without replay (they cannot be re-run).',
        read: (v) => v.counts.streamed,
      },
    },
    bodies: {
      budgetBytes: {
        kind: 'gauge',
        name: 'body_inflight_budget_bytes',
        help: '--body-inflight-budget-bytes: the most shares of request bodies in flight at once (0: no budget).',
        aggregator: 'first',
        read: (v) => v.sources.bodyBudget.capacity,
      },
      inUseBytes: {
        kind: 'gauge',
        name: 'body_inflight_bytes',
        help: 'Shares of the body budget reserved now by the request bodies in flight (not yet received whole).',
        read: (v) => v.sources.bodyBudget.inUseBytes,
      },
      inFlight: { kind: 'stat', help: 'Request bodies in flight now (holding a share of the body budget).', read: (v) => v.sources.bodyBudget.bodies },
    },
    extprocQueue: {
      maxStreams: { kind: 'stat', help: '--extproc-max-streams (0: no bound).', read: (v) => v.sources.extprocQueue.maxStreams },
      maxWaiting: { kind: 'stat', help: 'The most misses waiting for a stream at once.', read: (v) => v.sources.extprocQueue.maxWaiting },
      timeoutMs: { kind: 'stat', help: '--extproc-queue-timeout-ms.', read: (v) => v.sources.extprocQueue.timeoutMs },
      inFlight: {
        kind: 'gauge',
        name: 'extproc_slots_active',
        help: 'Misses holding one of the --extproc-max-streams ext_proc stream slots now.',
        read: (v) => v.sources.manager.tallies.extprocStreamsInFlight,
      },
      waiting: {
        kind: 'gauge',
        name: 'extproc_queue_active',
        help: 'Misses waiting now for an ext_proc stream (--extproc-max-streams are in use).',
        read: (v) => v.sources.manager.tallies.extprocQueueWaiting,
      },
      queued: {
        kind: 'tally',
        name: 'extproc_queued_total',
        help: 'Misses that had to wait in the ext_proc queue for a stream (timed-out and full ones: shed_total).',
      },
    },
  },
});

export type OverloadStatsBlock = StatsOf<typeof OVERLOAD_STATS>['overload'];

/** The overload tallies, one per tally of `OVERLOAD_STATS` at its path below `overload`. */
export type OverloadCountTallies = TalliesOf<typeof OVERLOAD_STATS>['overload'];

/** Zeroed overload tallies. */
export function overloadCountTallies(): OverloadCountTallies {
  return talliesOf(OVERLOAD_STATS).overload;
}

