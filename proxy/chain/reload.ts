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
import type { ProxyConfig } from '../config.js';
import type { Chain } from './chain.js';
import { loadUserFilters } from './load-filters.js';

export type ReloadReport =
  | {
      readonly kind: 'reloaded';
      readonly generation: number;
      readonly filters: readonly string[];
      /** Config fields that changed but take effect only after a restart. */
      readonly restartNeeded: readonly string[];
    }
  | { readonly kind: 'failed'; readonly stage: 'config' | 'filters'; readonly reason: string };

/** Fields a reload applies (the others are fixed for the process's life). */
const RELOADED: ReadonlySet<string> = new Set(['filters', 'filterTimeoutMs']);

export class FilterReloader {
  #config: ProxyConfig;
  #queue: Promise<unknown> = Promise.resolve();
  /** Reload attempts so far: each imports its modules under a new URL (node caches a failed import by URL too). */
  #attempts = 0;

  constructor(
    private readonly chain: Chain,
    config: ProxyConfig,
    /** Reads the config again (throws a UsageError naming the bad field). */
    private readonly reread: () => ProxyConfig,
    private readonly log: Logger,
  ) {
    this.#config = config;
  }

  /** Reloads once the reload before it (if any) is over. Never rejects. */
  reload(): Promise<ReloadReport> {
    const next = this.#queue.then(() => this.#reload());
    this.#queue = next;
    return next;
  }

  async #reload(): Promise<ReloadReport> {
    let config: ProxyConfig;
    try {
      config = this.reread();
    } catch (err) {
      return this.#failed('config', (err as Error).message);
    }
    let filters;
    try {
      filters = await loadUserFilters(config.filters, { log: this.log, actorSuffix: this.#config.actorSuffix, generation: ++this.#attempts });
    } catch (err) {
      return this.#failed('filters', (err as Error).message);
    }
    const set = this.chain.replaceUserFilters(filters, config.filterTimeoutMs);
    const restartNeeded = changedFields(this.#config, config).filter((k) => !RELOADED.has(k));
    this.#config = { ...this.#config, filters: config.filters, filterTimeoutMs: config.filterTimeoutMs };
    const report: ReloadReport = { kind: 'reloaded', generation: set.generation, filters: set.userFilterNames, restartNeeded };
    this.log.info({ generation: set.generation, filters: report.filters, restartNeeded }, 'filters reloaded');
    return report;
  }

  #failed(stage: 'config' | 'filters', reason: string): ReloadReport {
    this.log.error({ stage, reason }, 'filter reload failed: keeping the current filters');
    return { kind: 'failed', stage, reason };
  }
}

function changedFields(before: ProxyConfig, after: ProxyConfig): string[] {
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  return Object.keys(b).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}
