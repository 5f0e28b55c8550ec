/**
 * The cache's admin endpoints, a fastify plugin the proxy's admin server registers:
 * - `GET /cache?limit=N`: a bounded dump of live bindings, most recently used first (default 100, at most 10000):
 *   per binding its key, address, generation, age, time left, request-path hits and whether a refresh is in flight;
 * - `DELETE /cache`: evicts every binding;
 * - `DELETE /cache/:atespace/:name`: evicts one binding (404 when there is none).
 * Admin evictions are counted under the reason `admin`.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { isResourceName } from '../../../lib/actor-ref.js';
import type { BindingCache } from './binding-cache.js';

export const DEFAULT_DUMP_LIMIT = 100;
export const MAX_DUMP_LIMIT = 10_000;

export interface CacheAdminOptions {
  /** Undefined when the proxy runs with `--actor-cache off`: the endpoints then answer 404 "cache disabled". */
  readonly cache: BindingCache | undefined;
}

export function cacheAdminPlugin(opts: CacheAdminOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { cache } = opts;
    const disabled = { error: 'actor cache disabled (--actor-cache off)' };

    app.get<{ Querystring: { limit?: string } }>('/cache', async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const raw = req.query.limit;
      const limit = raw === undefined ? DEFAULT_DUMP_LIMIT : Number(raw);
      if (!Number.isInteger(limit) || limit < 0) return reply.code(400).send({ error: `limit: expected a whole number, got "${raw}"` });
      return { ttlMs: cache.ttlMs, maxEntries: cache.maxEntries, ...cache.dump(Math.min(limit, MAX_DUMP_LIMIT)) };
    });

    app.delete('/cache', async (_req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      return { evicted: cache.clear('admin') };
    });

    app.delete<{ Params: { atespace: string; name: string } }>('/cache/:atespace/:name', async (req, reply) => {
      if (cache === undefined) return reply.code(404).send(disabled);
      const { atespace, name } = req.params;
      if (!isResourceName(atespace) || !isResourceName(name)) return reply.code(400).send({ error: 'invalid atespace or actor name' });
      const key = `${atespace}/${name}`;
      if (!cache.remove(key, 'admin')) return reply.code(404).send({ error: `no binding for ${key}` });
      return { evicted: 1, key };
    });
  };
}
