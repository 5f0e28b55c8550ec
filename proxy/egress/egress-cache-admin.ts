/**
 * The egress verdict cache's admin endpoints, a fastify plugin the proxy's admin server registers beside the
 * bindings' `/cache` routes:
 * - `GET /cache/egress?limit=N&actor=ATESPACE/NAME&cert=DIGEST`: live verdicts, most recently used first (default
 *   100, at most 10000), only the actor's or the certificate's when asked. Per verdict: the certificate digest, the
 *   actor, the destination, the verdict (`allow` with its rule, `hostnames` with the rules the traffic is decided by,
 *   or `deny` with its status and outcome), the time left,
 *   its age, the hits it served and its origin (0: stored here; else the process it was adopted from);
 * - `DELETE /cache/egress?actor=ATESPACE/NAME`, `?cert=DIGEST` or `?all=true`: evicts the actor's verdicts (every
 *   certificate of it), the certificate's, or all, here and (through the shared table) in every other process of a
 *   `--workers` cluster; answers how many went here. Counted under the eviction reason `admin`.
 * With `--egress-cache off` both answer 404 `EGRESS_CACHE_DISABLED`. Errors are `{"error","code"}`.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { isResourceName } from '../../lib/actor-ref.js';
import { DEFAULT_DUMP_LIMIT, MAX_DUMP_LIMIT } from '../stages/actor-cache/admin.js';
import type { EgressVerdictCache, VerdictFilter } from './verdict-cache.js';

export interface EgressCacheAdminOptions {
  /** Undefined with `--egress-cache off`. */
  readonly cache: EgressVerdictCache | undefined;
}

interface FilterQuery {
  actor?: string;
  cert?: string;
}

/** One verdict as the admin shows it. */
export interface ListedVerdict {
  readonly certDigest: string;
  readonly atespace: string;
  readonly name: string;
  readonly destination: string;
  readonly verdict: 'allow' | 'hostnames' | 'deny';
  readonly status: number;
  /** `allowed`, or the deny's outcome. */
  readonly outcome: string;
  /** The policy rule that allowed it (null for a deny, and for a verdict decided on the traffic). */
  readonly rule: number | null;
  /** Decided on the traffic: the rules that may allow it, with their hostname patterns. */
  readonly hostnames?: readonly { readonly rule: number; readonly hostnames: readonly string[] }[];
  readonly expiresInMs: number;
  readonly ageMs: number;
  readonly hits: number;
  readonly origin: number;
}

export class BadRequest extends Error {}

const DIGEST = /^[0-9a-f]{64}$/;

/** `?actor=ATESPACE/NAME` and `?cert=DIGEST` as a filter (a BadRequest names what is wrong). */
export function filterOf(q: FilterQuery): VerdictFilter {
  const filter: { certDigest?: string; atespace?: string; name?: string } = {};
  if (q.actor !== undefined) {
    const [atespace = '', name = '', ...rest] = q.actor.split('/');
    if (rest.length > 0 || !isResourceName(atespace) || !isResourceName(name)) throw new BadRequest(`actor: expected ATESPACE/NAME, got "${q.actor}"`);
    filter.atespace = atespace;
    filter.name = name;
  }
  if (q.cert !== undefined) {
    const digest = q.cert.toLowerCase();
    if (!DIGEST.test(digest)) throw new BadRequest(`cert: expected a SHA-256 digest (64 hex digits), got "${q.cert}"`);
    filter.certDigest = digest;
  }
  return filter;
}

function limitParam(raw: string | undefined): number {
  const limit = raw === undefined ? DEFAULT_DUMP_LIMIT : Number(raw);
  if (!Number.isInteger(limit) || limit < 0) throw new BadRequest(`limit: expected a whole number, got "${raw}"`);
  return Math.min(limit, MAX_DUMP_LIMIT);
}

export function egressCacheAdminPlugin(opts: EgressCacheAdminOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { cache } = opts;
    const disabled = { error: 'egress cache disabled (--egress-cache off)', code: 'EGRESS_CACHE_DISABLED' };
    app.setErrorHandler((err, _req, reply: FastifyReply) => {
      if (err instanceof BadRequest) return reply.code(400).send({ error: err.message, code: 'BAD_REQUEST' });
      throw err;
    });

    app.get<{ Querystring: FilterQuery & { limit?: string } }>(
      '/cache/egress',
      { config: { description: 'egress verdicts, most recently used first: ?limit= (100, at most 10000) &actor=<atespace>/<name> &cert=<sha256 digest>' } },
      async (req, reply) => {
        if (cache === undefined) return reply.code(404).send(disabled);
        const limit = limitParam(req.query.limit);
        const filter = filterOf(req.query);
        const now = cache.now();
        const all = cache.entries();
        const matching = all.filter(({ key }) => (filter.certDigest === undefined || key.certDigest === filter.certDigest) && (filter.atespace === undefined || (key.actor.atespace === filter.atespace && key.actor.name === filter.name)));
        const verdicts: ListedVerdict[] = matching.slice(0, limit).map(({ key, entry }) => {
          const v = entry.verdict;
          return {
            certDigest: key.certDigest,
            atespace: key.actor.atespace,
            name: key.actor.name,
            destination: key.destination,
            verdict: v.kind,
            status: v.kind === 'deny' ? v.status : 200,
            outcome: v.kind === 'deny' ? v.outcome : 'allowed',
            rule: v.kind === 'allow' ? v.rule : null,
            ...(v.kind === 'hostnames' ? { hostnames: v.rules } : {}),
            expiresInMs: Math.max(0, Math.round(entry.expiresAtMs - now)),
            ageMs: Math.max(0, Math.round(now - entry.storedAtMs)),
            hits: entry.hits,
            origin: entry.origin,
          };
        });
        return { ttlMs: cache.ttlMs, maxEntries: cache.maxEntries, entries: all.length, matched: matching.length, truncated: matching.length > verdicts.length, verdicts };
      },
    );

    app.delete<{ Querystring: FilterQuery & { all?: string } }>(
      '/cache/egress',
      { config: { description: 'evicts egress verdicts in every process: ?actor=<atespace>/<name>, ?cert=<sha256 digest> or ?all=true (one of them)' } },
      async (req, reply) => {
        if (cache === undefined) return reply.code(404).send(disabled);
        const { actor, cert, all } = req.query;
        const given = [actor, cert, all].filter((v) => v !== undefined).length;
        if (given !== 1) throw new BadRequest('name exactly one of actor=<atespace>/<name>, cert=<sha256 digest> or all=true');
        if (all !== undefined && all !== 'true') throw new BadRequest(`all: expected true, got "${all}"`);
        const filter = filterOf({ ...(actor === undefined ? {} : { actor }), ...(cert === undefined ? {} : { cert }) });
        const evicted = cache.evict(filter);
        return { evicted, ...(actor === undefined ? {} : { actor }), ...(filter.certDigest === undefined ? {} : { cert: filter.certDigest }), ...(all === undefined ? {} : { all: true }) };
      },
    );
  };
}
