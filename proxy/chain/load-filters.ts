/**
 * Loads user filters given with `--filter`: ES modules whose default export is a `FilterFactory`. A path is
 * resolved against the working directory; `file:` URLs are used as they are. A module that does not load or does
 * not produce a filter stops the proxy at start-up with a clear message, never at request time.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { Filter, FilterFactory } from '../api/filter.js';
import { UsageError } from '../../lib/flags.js';

export async function loadUserFilter(spec: string, log: Logger, actorSuffix: string): Promise<Filter> {
  const url = spec.startsWith('file:') ? spec : pathToFileURL(path.resolve(spec)).href;
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    throw new UsageError(`--filter ${spec}: cannot load module: ${(err as Error).message}`);
  }
  const factory = mod.default;
  if (typeof factory !== 'function') throw new UsageError(`--filter ${spec}: the default export must be a filter factory function`);
  let filter: unknown;
  try {
    filter = await (factory as FilterFactory)({ log: log.child({ filter: spec }), actorSuffix });
  } catch (err) {
    throw new UsageError(`--filter ${spec}: the factory failed: ${(err as Error).message}`);
  }
  const f = filter as Partial<Filter> | null;
  if (f === null || typeof f !== 'object' || typeof f.name !== 'string' || f.name === '') {
    throw new UsageError(`--filter ${spec}: the factory must return an object with a non-empty "name"`);
  }
  for (const hook of ['onRequest', 'onUpstreamResponse', 'onRerun', 'onDone'] as const) {
    if (f[hook] !== undefined && typeof f[hook] !== 'function') throw new UsageError(`--filter ${spec}: "${hook}" must be a function`);
  }
  return f as Filter;
}

export async function loadUserFilters(specs: readonly string[], log: Logger, actorSuffix: string): Promise<Filter[]> {
  const out: Filter[] = [];
  for (const spec of specs) out.push(await loadUserFilter(spec, log, actorSuffix));
  return out;
}
