/**
 * Example filter: JWT bearer verification with `jose` (a small, dependency-free, well-kept JOSE library: install
 * it next to the proxy, `npm install jose`). Every request needs `Authorization: Bearer <JWT>` signed by a key
 * of the configured JWKS file, unexpired, with the configured issuer and audience; otherwise 401 with a
 * `WWW-Authenticate` challenge. On success the token is removed and the subject is forwarded as `x-auth-subject`
 * (the actor trusts it because the proxy strips any client-sent copy first, below).
 *
 *   filters:
 *     - module: ./dist/examples/jwt.js
 *       options: { jwks: ./jwks.json, issuer: https://login.example, audience: actors, algorithms: [ES256] }
 *
 * The JWKS file is read when the filter loads: rotate keys by updating it and reloading (SIGHUP).
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { CONTINUE, reply, type Filter, type FilterFactory, type FilterResult, type RequestContext } from '../proxy/api/public.js';

export interface JwtOptions {
  readonly jwks: JSONWebKeySet;
  readonly issuer: string;
  readonly audience: string;
  /** Accepted signature algorithms (default ES256, RS256, EdDSA). */
  readonly algorithms?: readonly string[];
}

const SUBJECT_HEADER = 'x-auth-subject';

function unauthorized(error: string, details: string): FilterResult {
  return reply({
    status: 401,
    headers: { 'www-authenticate': `Bearer realm="actor-edge", error="${error}"` },
    body: 'missing or invalid bearer token\n',
    details: `jwt: ${details}`,
  });
}

export function createJwtFilter(opts: JwtOptions): Filter {
  const keys = createLocalJWKSet(opts.jwks);
  const verify = { issuer: opts.issuer, audience: opts.audience, algorithms: [...(opts.algorithms ?? ['ES256', 'RS256', 'EdDSA'])] };
  return {
    name: 'jwt',
    async onRequest(ctx: RequestContext): Promise<FilterResult> {
      ctx.headers.delete(SUBJECT_HEADER); // only the proxy may say who the caller is
      const m = /^Bearer[ ]+([A-Za-z0-9_.-]+)\s*$/i.exec(ctx.headers.get('authorization') ?? '');
      if (m === null) return unauthorized('invalid_request', 'no bearer token');
      try {
        const { payload } = await jwtVerify(m[1] as string, keys, verify);
        ctx.headers.delete('authorization');
        if (typeof payload.sub === 'string') ctx.headers.set(SUBJECT_HEADER, payload.sub);
        return CONTINUE;
      } catch (err) {
        return unauthorized('invalid_token', (err as { code?: string }).code ?? (err as Error).message);
      }
    },
  };
}

const factory: FilterFactory = ({ options }) => {
  const { jwks, issuer, audience, algorithms } = options;
  if (typeof jwks !== 'string') throw new Error('jwt: options.jwks must be the path of a JWKS file');
  if (typeof issuer !== 'string' || typeof audience !== 'string') throw new Error('jwt: options.issuer and options.audience are required');
  if (algorithms !== undefined && !(Array.isArray(algorithms) && algorithms.every((a) => typeof a === 'string'))) throw new Error('jwt: options.algorithms must be a list');
  const set = JSON.parse(readFileSync(jwks, 'utf8')) as JSONWebKeySet;
  if (!Array.isArray(set?.keys)) throw new Error(`jwt: ${jwks} is not a JWKS (no "keys")`);
  return createJwtFilter({ jwks: set, issuer, audience, ...(algorithms !== undefined && { algorithms: algorithms as string[] }) });
};
export default factory;
