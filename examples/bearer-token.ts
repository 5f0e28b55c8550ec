/**
 * Example filter: require `Authorization: Bearer <token>` on every request, answer 401 otherwise.
 *
 *   BEARER_TOKENS=secret1,secret2 actor-edge proxy --filter ./dist/examples/bearer-token.js
 *
 * Tokens are compared in constant time (as SHA-256 digests). The Authorization header is removed before the
 * request goes on, so actors never see the credential (set BEARER_TOKEN_FORWARD=on to keep it).
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { CONTINUE, reply, type Filter, type FilterFactory, type FilterResult, type RequestContext } from '../proxy/api/public.js';

export interface BearerTokenOptions {
  readonly tokens: readonly string[];
  /** Keep the Authorization header on the forwarded request (default false). */
  readonly forward?: boolean;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

const UNAUTHORIZED: FilterResult = reply({
  status: 401,
  headers: { 'www-authenticate': 'Bearer realm="actor-edge"', 'content-type': 'text/plain; charset=utf-8' },
  body: 'missing or invalid bearer token\n',
  details: 'bearer-token: rejected',
});

export function createBearerTokenFilter(opts: BearerTokenOptions): Filter {
  const tokens = opts.tokens.filter((t) => t.length > 0).map(digest);
  if (tokens.length === 0) throw new Error('bearer-token: no tokens configured (BEARER_TOKENS)');
  const valid = (candidate: string): boolean => {
    const d = digest(candidate);
    let ok = false;
    for (const t of tokens) ok = timingSafeEqual(t, d) || ok; // check every token: no early exit
    return ok;
  };
  return {
    name: 'bearer-token',
    onRequest(ctx: RequestContext): FilterResult {
      const header = ctx.headers.get('authorization');
      const m = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
      if (m === null || !valid(m[1] as string)) return UNAUTHORIZED;
      if (opts.forward !== true) ctx.headers.delete('authorization');
      return CONTINUE;
    },
  };
}

const factory: FilterFactory = ({ log }) => {
  const tokens = (process.env.BEARER_TOKENS ?? '').split(',').map((t) => t.trim());
  const forward = /^(1|true|on|yes)$/i.test(process.env.BEARER_TOKEN_FORWARD ?? '');
  const filter = createBearerTokenFilter({ tokens, forward });
  log.info({ tokens: tokens.filter(Boolean).length, forward }, 'bearer-token filter loaded');
  return filter;
};
export default factory;
