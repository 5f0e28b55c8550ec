/**
 * Reloading the user filters (SIGHUP, or `POST /filters/reload` on the admin): re-read the config (the same argv
 * and environment, the config file again), import every filter module afresh, and swap the chain's user filters
 * atomically. Requests in flight finish on the filters they started with; new requests get the new ones. The
 * built-in stages are not rebuilt (the binding cache, the ext_proc channel and the pools survive).
 *
 * A reload whose config does not validate, or whose modules do not load or do not produce filters, changes
 * nothing: the old filters stay and the report says why. Reloads run one at a time. Only `filters` and
 * `filter-timeout-ms` take effect; any other field that changed is reported as needing a restart.
 */
import type { Logger } from 'pino';
import type { Chain } from './chain.js';
import { loadUserFilters, type FilterSpec } from './load-filters.js';
import type { OffloadPool } from './offload/offload-pool.js';

export type ReloadReport =
  | {
      readonly kind: 'reloaded';
      readonly generation: number;
      readonly filters: readonly string[];
      /** Config fields that changed but take effect only after a restart. */
      readonly restartNeeded: readonly string[];
    }
  | { readonly kind: 'failed'; readonly stage: 'config' | 'filters' | 'internal'; readonly reason: string };

/** What a reload reads again: the user filters and their timeout (and the rest of the config, to tell what else changed). */
export interface ReloadableConfig {
  readonly actorSuffix: string;
  readonly chain: { readonly filters: readonly FilterSpec[]; readonly filterTimeoutMs: number };
}

/** Fields a reload applies (the others are fixed for the process's life). */
const RELOADED: ReadonlySet<string> = new Set(['chain.filters', 'chain.filterTimeoutMs']);

export class FilterReloader<C extends ReloadableConfig> {
  #config: C;
  #queue: Promise<unknown> = Promise.resolve();
  /** Reload attempts so far: each imports its modules under a new URL (node caches a failed import by URL too). */
  #attempts = 0;

  constructor(
    private readonly chain: Chain,
    config: C,
    /** Reads the config again (throws a UsageError naming the bad field). */
    private readonly reread: () => C,
    private readonly log: Logger,
    /** An error the reload did not expect (the containment boundary's `filter-reload`): the filters in use stay. */
    private readonly internalError: (err: unknown) => void = () => undefined,
    /** The process's filter worker pool: the new modules' `offload` exports run on it (under their new URLs). */
    private readonly offload?: OffloadPool,
  ) {
    this.#config = config;
  }

  /** Reloads once the reload before it (if any) is over. Never rejects. */
  reload(): Promise<ReloadReport> {
    const next = this.#queue.then(
      () => this.#reload(),
    ).catch((err: unknown) => {
      this.internalError(err);
      return this.#failed('internal', err instanceof Error ? err.message : String(err));
    });
    this.#queue = next;
    return next;
  }

  async #reload(): Promise<ReloadReport> {
    let config: C;
    try {
      config = this.reread();
    } catch (err) {
      return this.#failed('config', (err as Error).message);
    }
    let filters;
    try {
      filters = await loadUserFilters(config.chain.filters, {
        log: this.log,
        actorSuffix: this.#config.actorSuffix,
        generation: ++this.#attempts,
        timeoutMs: config.chain.filterTimeoutMs,
        ...(this.offload === undefined ? {} : { offload: this.offload }),
      });
    } catch (err) {
      return this.#failed('filters', (err as Error).message);
    }
    const set = this.chain.replaceUserFilters(filters, config.chain.filterTimeoutMs);
    const restartNeeded = changedPaths(this.#config, config).filter((k) => !RELOADED.has(k));
    this.#config = { ...this.#config, chain: { ...this.#config.chain, filters: config.chain.filters, filterTimeoutMs: config.chain.filterTimeoutMs } };
    const report: ReloadReport = { kind: 'reloaded', generation: set.generation, filters: set.userFilterNames, restartNeeded };
    this.log.info({ generation: set.generation, filters: report.filters, restartNeeded }, 'filters reloaded');
    return report;
  }

  #failed(stage: 'config' | 'filters' | 'internal', reason: string): ReloadReport {
    this.log.error({ stage, reason }, 'filter reload failed: keeping the current filters');
    return { kind: 'failed', stage, reason };
  }
}

/** The dotted paths of the config fields that differ (plain objects are compared field by field). */
export function changedPaths(before: unknown, after: unknown, prefix = ''): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((k) => changedPaths(before[k], after[k], prefix === '' ? k : `${prefix}.${k}`));
  }
  return canonical(before) === canonical(after) ? [] : [prefix];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A comparable text for a leaf value (sets and regular expressions included). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x instanceof Set ? [...(x as Set<unknown>)] : x instanceof RegExp ? String(x) : x)) ?? 'undefined';
}
