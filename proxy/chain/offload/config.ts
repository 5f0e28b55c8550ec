/** The filter worker pool's slice of the proxy's config (the `chain` section): `--filter-workers`, `--filter-backlog`. */
import type { FlagSpecs } from '../../../lib/flags.js';

export interface OffloadConfig {
  /** `--filter-workers`: worker threads for filters' offloaded work (0: no pool, offloaded work runs inline). */
  readonly workers: number;
  /** `--filter-backlog`: offloaded calls that may wait for a worker; past it a call runs inline. */
  readonly backlog: number;
}

/**
 * 64 waiting calls. The queue bounds two things: how long an offloaded call waits (with 2 workers and 2 ms calls,
 * 64 ms at most, beyond which running it inline costs the event loop less than the client waits anyway) and what
 * the waiting inputs hold (a copy of each body: 64 bodies of at most `--max-replay-body-bytes`). piscina's own
 * `auto`, threads², would be 4 for 2 workers: a burst of heavy requests would overflow to the event loop at once.
 */
export const DEFAULT_FILTER_BACKLOG = 64;

export const OFFLOAD_FLAGS = {
  'filter-workers': {
    type: 'number',
    env: 'PROXY_FILTER_WORKERS',
    section: 'chain',
    default: 0,
    min: 0,
    max: 64,
    help: 'Worker threads that run the filters\' offloaded work (a filter module\'s "offload" export), off the event loop. 0: no pool, the work runs inline.',
  },
  'filter-backlog': {
    type: 'number',
    env: 'PROXY_FILTER_BACKLOG',
    section: 'chain',
    default: DEFAULT_FILTER_BACKLOG,
    min: 1,
    help: 'Offloaded filter calls that may wait for a worker thread; one more runs inline on the event loop (counted: filter_offload_inline_total).',
  },
} as const satisfies FlagSpecs;

export function buildOffloadConfig(flags: { readonly 'filter-workers': number; readonly 'filter-backlog': number }): OffloadConfig {
  return Object.freeze({ workers: flags['filter-workers'], backlog: flags['filter-backlog'] });
}

/** No pool: every offloaded call runs inline. */
export const NO_OFFLOAD_POOL: OffloadConfig = Object.freeze({ workers: 0, backlog: DEFAULT_FILTER_BACKLOG });
