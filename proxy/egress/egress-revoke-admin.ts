/**
 * The revoke endpoint, for an operator who cannot wait a TTL: `POST /egress/revoke?actor=ATESPACE/NAME` (or
 * `?cert=DIGEST`: one certificate, that is one activation) evicts the matching egress verdicts here and (through the
 * shared table) in every other process of a `--workers` cluster, and closes the tunnels they granted
 * (`revoked-admin`), here and in the others. Answers what went here: `{ actor | cert, evicted, tunnelsClosed }`.
 * Not a ban: the actor's next CONNECT asks ext_proc again, and is allowed if its policy still allows it (to keep it
 * out, change its policy or suspend it; its open tunnels then close at their next re-validation anyway).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { BadRequest, filterOf } from './egress-cache-admin.js';
import type { RevokeResult } from './grant-signals.js';
import type { VerdictFilter } from './verdict-cache.js';

export interface EgressRevokeAdminOptions {
  /** Evicts and closes what `filter` matches (`GrantSignals.revoke`). */
  readonly revoke: (filter: VerdictFilter) => RevokeResult;
}

export function egressRevokeAdminPlugin(opts: EgressRevokeAdminOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.setErrorHandler((err, _req, reply: FastifyReply) => {
      if (err instanceof BadRequest) return reply.code(400).send({ error: err.message, code: 'BAD_REQUEST' });
      throw err;
    });
    app.post<{ Querystring: { actor?: string; cert?: string } }>(
      '/egress/revoke',
      { config: { description: "revokes egress at once, in every process: ?actor=<atespace>/<name> or ?cert=<sha256 digest> (one of them); its verdicts evicted and its tunnels closed: {evicted, tunnelsClosed}" } },
      async (req) => {
        const { actor, cert } = req.query;
        if ((actor === undefined) === (cert === undefined)) throw new BadRequest('name exactly one of actor=<atespace>/<name> or cert=<sha256 digest>');
        const filter = filterOf(actor !== undefined ? { actor } : { cert: cert as string });
        const result = opts.revoke(filter);
        return { ...(actor === undefined ? {} : { actor }), ...(filter.certDigest === undefined ? {} : { cert: filter.certDigest }), ...result };
      },
    );
  };
}
