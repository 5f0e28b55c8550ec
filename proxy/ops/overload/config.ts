/**
 * The budgets' and the overload manager's slice of the proxy's config (the `overload` section): its flags, composed
 * into the proxy's flags by `proxy/config.ts`, and what they build.
 */
import { UsageError, type FlagSpecs, type FlagValues } from '../../../lib/flags.js';
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
/**
 * 8 MiB: 32 large bodies streaming at once, or thousands of small ones (with the 16 MiB replay budget, 24 MiB of
 * request bodies at most: a proxy at about 140 MB before any load stays under a 256 MB memory limit with room for
 * the garbage of uploads refused and forwarded; docs/operating.md "Sizing").
 */
export const DEFAULT_BODY_INFLIGHT_BUDGET_BYTES = 8 * 2 ** 20;

/** The `overload` section's flags. */
export const OVERLOAD_FLAGS = {
  'replay-buffer-budget-bytes': {
    type: 'number',
    env: 'PROXY_REPLAY_BUFFER_BUDGET_BYTES',
    section: 'overload',
    default: DEFAULT_REPLAY_BUFFER_BUDGET_BYTES,
    min: 0,
    help: 'Request-body bytes retained for replay by every request together, at most; a body that finds no room streams through without replay (it cannot be re-run), counted. 0: no process-wide budget.',
  },
  'body-inflight-budget-bytes': {
    type: 'number',
    env: 'PROXY_BODY_INFLIGHT_BUDGET_BYTES',
    section: 'overload',
    default: DEFAULT_BODY_INFLIGHT_BUDGET_BYTES,
    min: 0,
    help: 'Request bodies in flight (begun and not yet received whole) by every request together, at most: each reserves its Content-Length, or 256 KiB when larger or chunked; a request whose share does not fit is answered 503 with Retry-After, its body unread and its connection closed. 0: no budget.',
  },
  'max-connections': {
    type: 'number',
    env: 'PROXY_MAX_CONNECTIONS',
    section: 'overload',
    default: DEFAULT_MAX_CONNECTIONS,
    min: 0,
    help: 'Client connections open at once over every client listener together (HTTP, HTTPS, both CONNECT listeners; not admin); one more is closed as it is accepted, counted. 0: no limit.',
  },
  'overload-loop-delay-ms': {
    type: 'number',
    env: 'PROXY_OVERLOAD_LOOP_DELAY_MS',
    section: 'overload',
    default: DEFAULT_LOOP_DELAY_MS,
    min: 0,
    help: 'Mean event-loop delay (sampled every 250 ms) at which the proxy goes to shed-misses: a miss gets 503 with Retry-After and a new connection is closed (hits flow on open connections), /ready answers 503. 0: off.',
  },
  'overload-loop-delay-critical-ms': {
    type: 'number',
    env: 'PROXY_OVERLOAD_LOOP_DELAY_CRITICAL_MS',
    section: 'overload',
    default: DEFAULT_LOOP_DELAY_CRITICAL_MS,
    min: 0,
    help: 'Mean event-loop delay at which the proxy goes to shed-all: every new request gets 503 with Retry-After. 0: off.',
  },
  'overload-heap-bytes': {
    type: 'number',
    env: 'PROXY_OVERLOAD_HEAP_BYTES',
    section: 'overload',
    default: DEFAULT_HEAP_BYTES,
    min: 0,
    help: 'V8 heap in use at which the proxy goes to shed-misses (keep it below --max-old-space-size). 0: off.',
  },
  'overload-heap-critical-bytes': {
    type: 'number',
    env: 'PROXY_OVERLOAD_HEAP_CRITICAL_BYTES',
    section: 'overload',
    default: DEFAULT_HEAP_CRITICAL_BYTES,
    min: 0,
    help: 'V8 heap in use at which the proxy goes to shed-all. 0: off.',
  },
} as const satisfies FlagSpecs;

/** The overload slice from its flag values; a UsageError when a critical trigger is not above its shedding one. */
export function buildOverloadConfig(flags: FlagValues<typeof OVERLOAD_FLAGS>): OverloadConfig {
  for (const [shed, all] of [['overload-loop-delay-ms', 'overload-loop-delay-critical-ms'], ['overload-heap-bytes', 'overload-heap-critical-bytes']] as const) {
    if (flags[shed] > 0 && flags[all] > 0 && flags[all] <= flags[shed]) throw new UsageError(`--${all} must be above --${shed} (or either 0: off)`);
  }
  const freeze = Object.freeze;
  return freeze({
    replayBufferBudgetBytes: flags['replay-buffer-budget-bytes'],
    bodyInflightBudgetBytes: flags['body-inflight-budget-bytes'],
    maxConnections: flags['max-connections'],
    triggers: freeze({
      loopDelayMs: freeze({ shedMisses: flags['overload-loop-delay-ms'], shedAll: flags['overload-loop-delay-critical-ms'] }),
      heapUsedBytes: freeze({ shedMisses: flags['overload-heap-bytes'], shedAll: flags['overload-heap-critical-bytes'] }),
    }),
  });
}
