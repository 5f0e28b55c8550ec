/**
 * The `/stats` `overload` block: the state and what set it, each monitor's reading and thresholds, the requests
 * shed and connections refused by reason, the client connections against `--max-connections`, the replay budget,
 * and the ext_proc queue. Tallies count since the last `POST /stats/reset`; levels (open, in use, waiting) are now.
 */
import { SinceReset } from '../../../lib/since-reset.js';
import { MONITORS, type LevelName, type MonitorName } from './levels.js';
import type { OverloadManager } from './manager.js';
import type { ShedTallies } from './tallies.js';

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

export interface OverloadSources {
  readonly manager: OverloadManager;
  readonly budget: ReplayBudgetView;
  /** `--body-inflight-budget-bytes`. */
  readonly bodyBudget: BodyBudgetView;
  /** `--max-connections`. */
  readonly maxConnections: number;
  readonly extprocQueue: ExtProcQueueLimits;
}

export interface MonitorBlock {
  readonly reading: number;
  readonly shedMisses: number;
  readonly shedAll: number;
}

export interface OverloadStatsBlock {
  readonly state: LevelName;
  readonly level: number;
  readonly transitions: Record<LevelName, number>;
  readonly monitors: Record<MonitorName, MonitorBlock>;
  readonly shed: ShedTallies & { readonly replayBudget: number; readonly bodyBudget: number };
  readonly connections: { readonly open: number; readonly max: number; readonly refused: { readonly limit: number; readonly overload: number } };
  readonly replay: { readonly budgetBytes: number; readonly inUseBytes: number; readonly bodies: number; readonly streamedWithoutReplay: number };
  /** Request bodies in flight (`--body-inflight-budget-bytes`): the budget, the shares reserved now and by how many bodies. */
  readonly bodies: { readonly budgetBytes: number; readonly inUseBytes: number; readonly inFlight: number };
  readonly extprocQueue: {
    readonly maxStreams: number;
    readonly maxWaiting: number;
    readonly timeoutMs: number;
    readonly inFlight: number;
    readonly waiting: number;
    readonly queued: number;
  };
}

export class OverloadStats {
  readonly #s: OverloadSources;
  readonly #sinceReset: SinceReset<{ shed: ShedTallies; refused: { limit: number; overload: number }; transitions: Record<LevelName, number>; queued: number; streamed: number; bufferedRefused: number; bodyRefused: number }>;

  constructor(sources: OverloadSources) {
    this.#s = sources;
    const t = sources.manager.tallies;
    this.#sinceReset = new SinceReset(() => ({
      shed: t.shed,
      refused: t.connectionsRefused,
      transitions: t.transitions,
      queued: t.extprocQueued,
      streamed: sources.budget.streamedWithoutReplay,
      bufferedRefused: sources.budget.bufferedRefused,
      bodyRefused: sources.bodyBudget.refused,
    }));
  }

  reset(): void {
    this.#sinceReset.reset();
  }

  snapshot(): OverloadStatsBlock {
    const { manager, budget, bodyBudget, extprocQueue } = this.#s;
    const live = manager.tallies;
    const d = this.#sinceReset.current();
    const readings = manager.readings;
    const monitors = {} as Record<MonitorName, MonitorBlock>;
    for (const m of MONITORS) monitors[m] = { reading: Math.round(readings[m] * 1000) / 1000, ...manager.triggers[m] };
    return {
      state: manager.levelName,
      level: manager.level,
      transitions: { ...d.transitions },
      monitors,
      shed: { ...d.shed, replayBudget: d.bufferedRefused, bodyBudget: d.bodyRefused },
      connections: { open: live.connectionsOpen, max: this.#s.maxConnections, refused: { ...d.refused } },
      replay: { budgetBytes: budget.capacity, inUseBytes: budget.inUseBytes, bodies: budget.bodies, streamedWithoutReplay: d.streamed },
      bodies: { budgetBytes: bodyBudget.capacity, inUseBytes: bodyBudget.inUseBytes, inFlight: bodyBudget.bodies },
      extprocQueue: { ...extprocQueue, inFlight: live.extprocStreamsInFlight, waiting: live.extprocQueueWaiting, queued: d.queued },
    };
  }
}
