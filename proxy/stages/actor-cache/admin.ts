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
 * Admin evictions are counted under the reason `admin`. Errors are `{"error","code"}`.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { isResourceName } from '../../../lib/actor-ref.js';
import { isLiteralAddress, type BindingCache } from './binding-cache.js';

export const DEFAULT_DUMP_LIMIT = 100;
export const MAX_DUMP_LIMIT = 10_000;

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
      const listing = cache.list({
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
      const binding = cache.view(key);
      if (binding === undefined) return reply.code(404).send({ error: `no binding for ${key}`, code: 'BINDING_NOT_FOUND' });
      return { ttlMs: cache.ttlMs, binding };
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
