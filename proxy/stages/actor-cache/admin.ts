/**
 * The cache's admin endpoints, a fastify plugin the proxy's admin server registers:
 * - `GET /cache?limit=N&order=recent|key&after=KEY&q=TEXT&worker=IP`: live bindings (default 100, at most 10000),
 *   most recently used first (`order=recent`, the default) or by key (`order=key`, paged: `next` is the `after` of
 *   the next page), only those whose key or address contains `q`, only those on `worker` (an IP: any port; or an
 *   exact `ip:port`). Per binding: key, address, generation, age, time left, request-path hits and whether a
 *   refresh is in flight;
 * - `GET /cache/:atespace/:name`: one binding (404 `BINDING_NOT_FOUND` when there is none);
 * - `DELETE /cache`: evicts every binding; `DELETE /cache?worker=IP` every binding on that worker (a node being
 *   drained);
 * - `DELETE /cache/:atespace/:name`: evicts one binding (404 when there is none).
 * Admin evictions are counted under the reason `admin`. Errors are `{"error","code"}`. The listing (filters, order,
 * pages, the per-binding view) is built here from the cache's live bindings (`BindingCache.bindings`): the cache
 * itself knows nothing of listings, HTTP or the admin.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { isResourceName } from '../../../lib/actor-ref.js';
import { isLiteralAddress, onWorker, type Binding, type BindingCache } from './binding-cache.js';

export const DEFAULT_DUMP_LIMIT = 100;
export const MAX_DUMP_LIMIT = 10_000;

/** One live binding as the admin shows it. */
export interface ListedBinding {
  readonly key: string;
  readonly address: string;
  readonly generation: number;
  readonly ageMs: number;
  readonly expiresInMs: number;
  readonly hits: number;
  /** A refresh-ahead re-validation of this binding is in flight. */
  readonly refreshing: boolean;
}

/** Which bindings a listing shows, in which order, from where. */
export interface ListOptions {
  readonly limit: number;
  /** `recent`: most recently used first; `key`: by key, so a listing can be paged with `after`. */
  readonly order: 'recent' | 'key';
  /** With `order: 'key'`: only keys after this one (the previous page's `next`). */
  readonly after?: string;
  /** Only bindings whose key or address contains this text. */
  readonly search?: string;
  /** Only bindings to this worker: an IP (any port) or an exact `ip:port`. */
  readonly worker?: string;
}

export interface CacheListing {
  /** Live bindings in the cache. */
  readonly entries: number;
  /** Live bindings that match the filters. */
  readonly matched: number;
  /** Some matching bindings are not on this page. */
  readonly truncated: boolean;
  /** With `order: 'key'` and more to come: pass it as `after` for the next page; else null. */
  readonly next: string | null;
  readonly bindings: readonly ListedBinding[];
}

/** `binding` (stored under `key`) as the admin shows it, at the cache's clock time `now`. */
export function listedBinding(key: string, binding: Binding, now: number): ListedBinding {
  return {
    key,
    address: binding.address,
    generation: binding.generation,
    ageMs: Math.max(0, Math.round(now - binding.learnedAt)),
    expiresInMs: Math.max(0, Math.round(binding.expiresAt - now)),
    hits: binding.hits,
    refreshing: binding.refresh === 'in-flight',
  };
}

/** A listing: the live bindings matching `opts`, in its order, at most `opts.limit` (O(entries)). */
export function listBindings(cache: BindingCache, opts: ListOptions): CacheListing {
  const search = opts.search?.toLowerCase();
  const matches = (key: string, b: Binding): boolean =>
    (search === undefined || key.includes(search) || b.address.includes(search)) && (opts.worker === undefined || onWorker(b.address, opts.worker));
  let candidates: (readonly [string, Binding])[] = [];
  let entries = 0;
  for (const pair of cache.bindings()) {
    entries++;
    if (matches(pair[0], pair[1])) candidates.push(pair);
  }
  const now = cache.now();
  const matched = candidates.length;
  if (opts.order === 'key') {
    const after = opts.after;
    if (after !== undefined) candidates = candidates.filter(([key]) => key > after);
    candidates.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  const page = candidates.slice(0, opts.limit);
  const more = candidates.length > page.length;
  const last = page[page.length - 1];
  return {
    entries,
    matched,
    truncated: matched > page.length,
    next: opts.order === 'key' && more && last !== undefined ? last[0] : null,
    bindings: page.map(([key, b]) => listedBinding(key, b, now)),
  };
}

export interface CacheAdminOptions {
  /** Undefined when the proxy runs with `--actor-cache off`: the endpoints then answer 404 `CACHE_DISABLED`. */
  readonly cache: BindingCache | undefined;
}

interface ListQuery {
  limit?: string;
  order?: string;
  after?: string;
  q?: string;
  worker?: string;
}

interface KeyParams {
  atespace: string;
  name: string;
}

class BadRequest extends Error {}

function badRequest(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).send({ error: message, code: 'BAD_REQUEST' });
}

/** `worker=` as given: an IP, or a literal `ip:port`; undefined when absent. */
function workerParam(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const bare = raw.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare) || isLiteralAddress(raw)) return raw;
  throw new BadRequest(`worker: expected an IP address or IP:PORT, got "${raw}"`);
}

function limitParam(raw: string | undefined): number {
  const limit = raw === undefined ? DEFAULT_DUMP_LIMIT : Number(raw);
  if (!Number.isInteger(limit) || limit < 0) throw new BadRequest(`limit: expected a whole number, got "${raw}"`);
  return Math.min(limit, MAX_DUMP_LIMIT);
}

function keyOf(params: KeyParams): string {
  if (!isResourceName(params.atespace) || !isResourceName(params.name)) throw new BadRequest('invalid atespace or actor name');
  return `${params.atespace}/${params.name}`;
}

export function cacheAdminPlugin(opts: CacheAdminOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { cache } = opts;
    const disabled = { error: 'actor cache disabled (--actor-cache off)', code: 'CACHE_DISABLED' };
    app.setErrorHandler((err, _req, reply) => {
      if (err instanceof BadRequest) return badRequest(reply, err.message);
      throw err;
    });

    app.get<{ Querystring: ListQuery }>('/cache', { config: { description: 'bindings: ?limit= (100, at most 10000) &order=recent|key &after=<key> (pages of order=key) &q=<text> &worker=<ip>' } }, async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const q = req.query;
      const order = q.order ?? 'recent';
      if (order !== 'recent' && order !== 'key') return badRequest(reply, `order: expected recent or key, got "${order}"`);
      if (q.after !== undefined && order !== 'key') return badRequest(reply, 'after: only with order=key (the recent order moves with every hit)');
      const worker = workerParam(q.worker);
      const listing = listBindings(cache, {
        limit: limitParam(q.limit),
        order,
        ...(q.after === undefined ? {} : { after: q.after }),
        ...(q.q === undefined || q.q === '' ? {} : { search: q.q }),
        ...(worker === undefined ? {} : { worker }),
      });
      return { ttlMs: cache.ttlMs, maxEntries: cache.maxEntries, ...listing };
    });

    app.get<{ Params: KeyParams }>('/cache/:atespace/:name', { config: { description: 'one binding (404 BINDING_NOT_FOUND when there is none)' } }, async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const key = keyOf(req.params);
      const stored = cache.peek(key);
      if (stored === undefined) return reply.code(404).send({ error: `no binding for ${key}`, code: 'BINDING_NOT_FOUND' });
      return { ttlMs: cache.ttlMs, binding: listedBinding(key, stored, cache.now()) };
    });

    app.delete<{ Querystring: { worker?: string } }>('/cache', { config: { description: 'evicts every binding, or with ?worker=<ip> every binding on that worker' } }, async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const worker = workerParam(req.query.worker);
      if (worker === undefined) return { evicted: cache.clear('admin') };
      return { evicted: cache.removeWorker(worker, 'admin'), worker };
    });

    app.delete<{ Params: KeyParams }>('/cache/:atespace/:name', { config: { description: 'evicts one binding (404 when there is none)' } }, async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const key = keyOf(req.params);
      if (!cache.remove(key, 'admin')) return reply.code(404).send({ error: `no binding for ${key}`, code: 'BINDING_NOT_FOUND' });
      return { evicted: 1, key };
    });
  };
}
