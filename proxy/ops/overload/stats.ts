/**
 * The overload block's two views (`OVERLOAD_STATS`, declared in counters.ts): since the last `POST /stats/reset`
 * (`/stats`) and lifetime (`/metrics`), read from the manager's tallies, the budgets and the levels now.
 */
import { SinceReset } from '../../../lib/since-reset.js';
import { statsBlock, type StatsSource } from '../../../lib/stats/derive.js';
import { OVERLOAD_STATS, type BudgetCounts, type OverloadSources, type OverloadStatsBlock, type OverloadView } from './counters.js';

export {
  OVERLOAD_STATS,
  type BodyBudgetView,
  type ExtProcQueueLimits,
  type OverloadSources,
  type OverloadStatsBlock,
  type OverloadView,
  type ReplayBudgetView,
} from './counters.js';

/** The budgets' lifetime counts. */
export function budgetCounts(sources: OverloadSources): BudgetCounts {
  return { streamed: sources.budget.streamedWithoutReplay, bufferedRefused: sources.budget.bufferedRefused, bodyRefused: sources.bodyBudget.refused };
}

/** The lifetime view of `sources` (`/metrics`). */
export function overloadLifetime(sources: OverloadSources): OverloadView {
  return { tallies: { overload: sources.manager.tallies.counts }, counts: budgetCounts(sources), sources };
}

/** The overload block's two views: since the last reset (`/stats`) and lifetime (`/metrics`). */
export class OverloadStats implements StatsSource<OverloadView> {
  readonly #s: OverloadSources;
  readonly #sinceReset: SinceReset<{ readonly tallies: object; readonly counts: BudgetCounts }>;

  constructor(sources: OverloadSources) {
    this.#s = sources;
    this.#sinceReset = new SinceReset(() => ({ tallies: sources.manager.tallies.counts, counts: budgetCounts(sources) }));
  }

  reset(): void {
    this.#sinceReset.reset();
  }

  sinceReset(): OverloadView {
    const now = this.#sinceReset.current();
    return { tallies: { overload: now.tallies }, counts: now.counts, sources: this.#s };
  }

  lifetime(): OverloadView {
    return overloadLifetime(this.#s);
  }

  snapshot(): OverloadStatsBlock {
    return statsBlock(OVERLOAD_STATS, this.sinceReset()).overload;
  }
}
