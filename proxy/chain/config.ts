/**
 * The chain's slice of the proxy's config (the `chain` section): the user filters and their time limit, the
 * filters' worker pool (`offload/config.ts`) and the re-run policy (`rerun.ts`), with their flags, composed into
 * the proxy's flags by `proxy/config.ts`, and the config file's filter list (`chain.filters`).
 */
import path from 'node:path';
import { UsageError, type FileField, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { MAX_RERUN_ATTEMPTS } from '../ops/stats.js';
import { DEFAULT_FILTER_TIMEOUT_MS } from './filter-timeout.js';
import { filterSpec, type FilterSpec } from './load-filters.js';
import { buildOffloadConfig, OFFLOAD_FLAGS, type OffloadConfig } from './offload/config.js';
import { DEFAULT_RERUN_POLICY, type RerunPolicy } from './rerun.js';

export interface ChainSettings {
  /** User filters in chain order: `--filter` / `PROXY_FILTERS` (no options), else the config file's `filters`. */
  readonly filters: readonly FilterSpec[];
  readonly filterTimeoutMs: number;
  /** The filters' worker pool: `--filter-workers`, `--filter-backlog` (fixed for the process's life). */
  readonly offload: OffloadConfig;
  /** `--max-reruns`, `--rerun-budget-ms`, `--rerun-backoff-min-ms`, `--rerun-backoff-max-ms`. */
  readonly rerun: RerunPolicy;
}

/** The re-run policy's flags. */
export const RERUN_FLAGS = {
  'max-reruns': {
    type: 'number',
    env: 'PROXY_MAX_RERUNS',
    section: 'chain',
    default: DEFAULT_RERUN_POLICY.maxReruns,
    max: MAX_RERUN_ATTEMPTS,
    help: 'How often one request may re-run the chain after a stale answer, connect failure or reset.',
  },
  'rerun-budget-ms': {
    type: 'number',
    env: 'PROXY_RERUN_BUDGET_MS',
    section: 'chain',
    default: DEFAULT_RERUN_POLICY.budgetMs,
    min: 1,
    help: 'Every re-run must start within this time of the request\'s arrival (503 "re-runs exhausted" otherwise).',
  },
  'rerun-backoff-min-ms': {
    type: 'number',
    env: 'PROXY_RERUN_BACKOFF_MIN_MS',
    section: 'chain',
    default: DEFAULT_RERUN_POLICY.backoffMinMs,
    help: 'Shortest wait before the second and later re-runs of a request (the first re-run never waits).',
  },
  'rerun-backoff-max-ms': {
    type: 'number',
    env: 'PROXY_RERUN_BACKOFF_MAX_MS',
    section: 'chain',
    default: DEFAULT_RERUN_POLICY.backoffMaxMs,
    help: 'Longest such wait; each wait is drawn uniformly between the two.',
  },
} as const satisfies FlagSpecs;

/** The user filters' flags. */
export const FILTER_FLAGS = {
  filter: {
    type: 'list',
    env: 'PROXY_FILTERS',
    section: 'chain',
    noFile: true,
    help: 'An ES module whose default export is a filter factory; user filters run first, in the order given (replaces the config file\'s "filters").',
  },
  'filter-timeout-ms': {
    type: 'number',
    env: 'PROXY_FILTER_TIMEOUT_MS',
    section: 'chain',
    default: DEFAULT_FILTER_TIMEOUT_MS,
    min: 1,
    help: 'A user filter\'s onRequest or onResponse promise must settle within this time (504 PROXY_ERR_FILTER_TIMEOUT otherwise).',
  },
  ...OFFLOAD_FLAGS,
} as const satisfies FlagSpecs;

/** One entry of `chain.filters`: a module path, or `{ module, options }` (paths relative to the config file). */
const FILTER_ITEM = {
  type: ['string', 'object'],
  minLength: 1,
  properties: { module: { type: 'string', minLength: 1 }, options: { type: 'object' } },
  required: ['module'],
  additionalProperties: false,
};

/** The chain's config-file-only field: the filter list with each filter's options. */
export const CHAIN_FILE_FIELDS = {
  'chain.filters': {
    help: 'User filters in chain order: a module path or { module, options } (relative to the config file); --filter replaces the list.',
    schema: { type: 'array', items: FILTER_ITEM },
    flag: 'filter',
    flat: 'filters',
  },
} as const satisfies Readonly<Record<string, FileField>>;

/**
 * The config file's `chain.filters` (from `fields`, the file fields read from `file`), module paths resolved
 * against the file's folder; undefined without a file or without the field.
 */
export function filtersInFile(fields: Readonly<Record<string, unknown>>, file: string | undefined): readonly FilterSpec[] | undefined {
  const list = fields['chain.filters'] as readonly (string | { module: string; options?: Record<string, unknown> })[] | undefined;
  if (list === undefined || file === undefined) return undefined;
  const dir = path.dirname(path.resolve(file));
  const resolve = (module: string): string => (module.startsWith('file:') ? module : path.resolve(dir, module));
  return Object.freeze(list.map((item) => (typeof item === 'string' ? filterSpec(resolve(item)) : filterSpec(resolve(item.module), item.options ?? {}))));
}

/**
 * The chain's slice from its flag values: `--filter` when given, else the config file's filters (`fileFilters`);
 * a UsageError when the backoff's shortest wait is above its longest.
 */
export function buildChainSettings(flags: FlagValues<typeof RERUN_FLAGS & typeof FILTER_FLAGS>, fileFilters: readonly FilterSpec[] | undefined): ChainSettings {
  if (flags['rerun-backoff-min-ms'] > flags['rerun-backoff-max-ms']) {
    throw new UsageError('--rerun-backoff-min-ms must not be above --rerun-backoff-max-ms');
  }
  const freeze = Object.freeze;
  return freeze({
    filters: freeze(flags.filter.length > 0 || fileFilters === undefined ? flags.filter.map((m) => filterSpec(m)) : fileFilters),
    filterTimeoutMs: flags['filter-timeout-ms'],
    offload: buildOffloadConfig(flags),
    rerun: freeze({
      maxReruns: flags['max-reruns'],
      budgetMs: flags['rerun-budget-ms'],
      backoffMinMs: flags['rerun-backoff-min-ms'],
      backoffMaxMs: flags['rerun-backoff-max-ms'],
    }),
  });
}
