/**
 * Loads user filters: ES modules whose default export is a `FilterFactory`, given with `--filter` or in the config
 * file's `filters` list (`{ module, options }`: the factory receives `options` as `FilterContext.options`). A path
 * is resolved against the working directory (the config file resolves its own relative paths against its
 * directory); `file:` URLs are used as they are. At start-up a module that does not load or does not produce a
 * filter stops the proxy with a clear message, never at request time; on a reload it fails the reload instead.
 *
 * A reload imports each module again under a new URL (`?reload=N`), as ES modules are cached by URL: the module
 * itself is re-evaluated, the modules it imports are not (and node never unloads the old instance).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { Filter, FilterFactory } from '../api/filter.js';
import { UsageError } from '../../lib/flags.js';

/** One user filter as configured: its module and the options handed to its factory. */
export interface FilterSpec {
  readonly module: string;
  readonly options: Readonly<Record<string, unknown>>;
}

const HOOKS = ['onRequest', 'onResponse', 'onUpstreamResponse', 'onRerun', 'onDone'] as const;
const NO_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A spec from a bare module path (a `--filter` flag). */
export function filterSpec(module: string, options: Readonly<Record<string, unknown>> = NO_OPTIONS): FilterSpec {
  return Object.freeze({ module, options });
}

export interface LoadOptions {
  readonly log: Logger;
  readonly actorSuffix: string;
  /** Set on a reload (1, 2, ... per attempt): imports every module afresh (a new URL, so node evaluates it again). */
  readonly generation?: number;
}

export async function loadUserFilter(spec: FilterSpec, opts: LoadOptions): Promise<Filter> {
  const name = spec.module;
  let url = name.startsWith('file:') ? name : pathToFileURL(path.resolve(name)).href;
  if (opts.generation !== undefined && opts.generation > 0) url += `${url.includes('?') ? '&' : '?'}reload=${opts.generation}`;
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    throw new UsageError(`filter ${name}: cannot load module: ${(err as Error).message}`);
  }
  const factory = mod.default;
  if (typeof factory !== 'function') throw new UsageError(`filter ${name}: the default export must be a filter factory function`);
  let filter: unknown;
  try {
    filter = await (factory as FilterFactory)({ log: opts.log.child({ filter: name }), actorSuffix: opts.actorSuffix, options: spec.options });
  } catch (err) {
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
