/** The budgets' and the overload manager's slice of the proxy's config (the `overload` section). */
import type { Triggers } from './levels.js';

export interface OverloadConfig {
  /** `--replay-buffer-budget-bytes` (0: no process-wide budget). */
  readonly replayBufferBudgetBytes: number;
  /** `--body-inflight-budget-bytes` (0: no budget). */
  readonly bodyInflightBudgetBytes: number;
  /** `--max-connections` over every client listener together (0: no limit). */
  readonly maxConnections: number;
  /** `--overload-loop-delay-ms` / `-critical-ms`, `--overload-heap-bytes` / `-critical-bytes` (0: off). */
  readonly triggers: Triggers;
}

/**
 * 16 MiB: 16 bodies at the default `--max-replay-body-bytes` (1 MiB), or thousands of the small ones most re-runs
 * replay; with the 8 MiB body budget, what a proxy under a 256 MB memory limit can hold of request bodies
 * (docs/operating.md "Sizing").
 */
export const DEFAULT_REPLAY_BUFFER_BUDGET_BYTES = 16 * 2 ** 20;
/** Twice the 10,000 idle connections the proxy is sized for (about 2 KB each): 40 MB of idle connections at most. */
export const DEFAULT_MAX_CONNECTIONS = 20_000;
/** A mean event-loop delay of half a second: every request already waits that long. */
export const DEFAULT_LOOP_DELAY_MS = 500;
export const DEFAULT_LOOP_DELAY_CRITICAL_MS = 2000;
/** Below the 384 MiB old space the shipped deployments give the proxy (`--max-old-space-size=384`, 512 MiB limit). */
export const DEFAULT_HEAP_BYTES = 256 * 2 ** 20;
export const DEFAULT_HEAP_CRITICAL_BYTES = 320 * 2 ** 20;
