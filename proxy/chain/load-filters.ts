/**
 * Loads user filters: modules whose default export is a `FilterFactory` (ES modules, or CommonJS: see
 * `filter-module.ts`), given with `--filter` or in the config file's `filters` list (`{ module, options }`: the
 * factory receives `options` as `FilterContext.options`). A path is resolved against the working directory (the
 * config file resolves its own relative paths against its directory); `file:` URLs are used as they are. At
 * start-up a module that does not load or does not produce a filter stops the proxy with a clear message, never at
 * request time; on a reload it fails the reload instead.
 *
 * A reload imports each module again under a new URL (`?reload=N`), as ES modules are cached by URL: the module
 * itself is re-evaluated, the modules it imports are not (and node never unloads the old instance). The import and
 * the factory are each bounded by `--filter-timeout-ms`: a module that never finishes loading fails its load (at
 * start, the start; on a reload, that reload, keeping the filters in use) instead of wedging every later reload.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { Filter } from '../api/filter.js';
import { UsageError } from '../../lib/flags.js';
import { filterFactoryOf } from './filter-module.js';
import type { OffloadFunction } from '../api/offload.js';
import { offloadExportOf } from './offload/offload-export.js';
import { INLINE_OFFLOAD, type OffloadPool } from './offload/offload-pool.js';

/** One user filter as configured: its module and the options handed to its factory. */
export interface FilterSpec {
  readonly module: string;
  readonly options: Readonly<Record<string, unknown>>;
}

const HOOKS = ['onRequest', 'onResponse', 'onUpstreamResponse', 'onRerun', 'onDone'] as const;

/** How long a module's import, and then its factory, may take by default. */
const DEFAULT_LOAD_TIMEOUT_MS = 10_000;

/**
 * `pending`, or a UsageError once `ms` passed first. A module whose top-level await never settles stays pending
 * in node forever; the load gives up on it (a reload then fails and keeps the filters in use; the next reload
 * imports under a new URL).
 */
function within<T>(pending: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new UsageError(message)), ms);
    timer.unref();
    pending.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
const NO_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A spec from a bare module path (a `--filter` flag). */
export function filterSpec(module: string, options: Readonly<Record<string, unknown>> = NO_OPTIONS): FilterSpec {
  return Object.freeze({ module, options });
}

export interface LoadOptions {
  readonly log: Logger;
  readonly actorSuffix: string;
  /** The module's import and its factory must each settle within this (`--filter-timeout-ms`; default 10 s). */
  readonly timeoutMs?: number;
  /** Set on a reload (1, 2, ... per attempt): imports every module afresh (a new URL, so node evaluates it again). */
  readonly generation?: number;
  /** The worker pool a module's `offload` export runs on (default: none, it runs inline). */
  readonly offload?: OffloadPool;
}

export async function loadUserFilter(spec: FilterSpec, opts: LoadOptions): Promise<Filter> {
  const name = spec.module;
  let url = name.startsWith('file:') ? name : pathToFileURL(path.resolve(name)).href;
  if (opts.generation !== undefined && opts.generation > 0) url += `${url.includes('?') ? '&' : '?'}reload=${opts.generation}`;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
  let mod: Record<string, unknown>;
  try {
    mod = (await within(import(url), timeoutMs, `filter ${name}: the module did not finish loading within ${timeoutMs} ms`)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`filter ${name}: cannot load module: ${(err as Error).message}`);
  }
  const factory = filterFactoryOf(mod, name, url);
  let offload: OffloadFunction | undefined;
  try {
    offload = offloadExportOf(mod);
  } catch (err) {
    throw new UsageError(`filter ${name}: ${(err as Error).message}`);
  }
  // Bound to this URL: after a reload the workers import the new module, while requests on the old one keep it.
  const offloader = offload === undefined ? {} : { offload: (opts.offload ?? INLINE_OFFLOAD).offloader(url, offload) };
  let filter: unknown;
  try {
    filter = await within(
      Promise.resolve(factory({ log: opts.log.child({ filter: name }), actorSuffix: opts.actorSuffix, options: spec.options, ...offloader })),
      timeoutMs,
      `filter ${name}: the factory did not return within ${timeoutMs} ms`,
    );
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`filter ${name}: the factory failed: ${(err as Error).message}`);
  }
  const f = filter as Partial<Filter> | null;
  if (f === null || typeof f !== 'object' || typeof f.name !== 'string' || f.name === '') {
    throw new UsageError(`filter ${name}: the factory must return an object with a non-empty "name"`);
  }
  for (const hook of HOOKS) {
    if (f[hook] !== undefined && typeof f[hook] !== 'function') throw new UsageError(`filter ${name}: "${hook}" must be a function`);
  }
  return f as Filter;
}

export async function loadUserFilters(specs: readonly FilterSpec[], opts: LoadOptions): Promise<Filter[]> {
  const out: Filter[] = [];
  for (const spec of specs) out.push(await loadUserFilter(spec, opts));
  return out;
}
