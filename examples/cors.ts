/**
 * Example filter: CORS (the Fetch standard's cross-origin protocol) at the edge. A preflight (`OPTIONS` with
 * `Origin` and `Access-Control-Request-Method`) from an allowed origin is answered locally with 204 — it never
 * wakes an actor; a preflight from any other origin gets 403. On every other request from an allowed origin the
 * response phase adds `Access-Control-Allow-Origin` (and `-Credentials`, `-Expose-Headers` when configured), to
 * the actor's answers and to the proxy's own error pages alike. `Vary: Origin` is added whenever the answer
 * depends on the origin.
 *
 * Options (config file):
 *   filters:
 *     - module: ./dist/examples/cors.js
 *       options:
 *         origins: [https://app.example]      # or "*"
 *         methods: [GET, POST, PUT, DELETE]   # default GET, HEAD, POST
 *         headers: [content-type, authorization]
 *         exposeHeaders: [x-request-id]
 *         credentials: false
 *         maxAgeSeconds: 600
 *
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { CONTINUE, reply, type Filter, type FilterFactory, type FilterResponse, type FilterResult, type RequestContext } from '../proxy/api/public.js';

export interface CorsOptions {
  /** Allowed origins (`scheme://host[:port]`), or `*` for any (not with `credentials`). */
  readonly origins: readonly string[] | '*';
  readonly methods?: readonly string[];
  readonly headers?: readonly string[];
  readonly exposeHeaders?: readonly string[];
  readonly credentials?: boolean;
  readonly maxAgeSeconds?: number;
}

const DENIED: FilterResult = reply({ status: 403, body: 'CORS preflight refused\n', details: 'cors: origin not allowed' });

export function createCorsFilter(opts: CorsOptions): Filter {
  const any = opts.origins === '*';
  if (any && opts.credentials === true) throw new Error('cors: origins "*" cannot be combined with credentials');
  const allowed = new Set(any ? [] : (opts.origins as readonly string[]).map((o) => o.toLowerCase()));
  const allows = (origin: string): boolean => any || allowed.has(origin.toLowerCase());
  const methods = (opts.methods ?? ['GET', 'HEAD', 'POST']).join(', ');
  const maxAge = String(opts.maxAgeSeconds ?? 600);
  const expose = opts.exposeHeaders?.join(', ');
  const allowOrigin = (origin: string): string => (any ? '*' : origin);
  return {
    name: 'cors',
    onRequest(ctx: RequestContext): FilterResult {
      if (ctx.method !== 'OPTIONS') return CONTINUE;
      const origin = ctx.headers.get('origin');
      const method = ctx.headers.get('access-control-request-method');
      if (origin === undefined || method === undefined) return CONTINUE; // a plain OPTIONS: the actor answers
      if (!allows(origin)) return DENIED;
      const headers: Record<string, string> = {
        'access-control-allow-origin': allowOrigin(origin),
        'access-control-allow-methods': methods,
        'access-control-max-age': maxAge,
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      };
      // Without a configured list, echo what the browser asked for (it is only a permission to send them).
      const asked = ctx.headers.get('access-control-request-headers');
      const allowHeaders = opts.headers?.join(', ') ?? asked;
      if (allowHeaders !== undefined) headers['access-control-allow-headers'] = allowHeaders;
      if (opts.credentials === true) headers['access-control-allow-credentials'] = 'true';
      return reply({ status: 204, headers, details: 'cors: preflight' });
    },
    onResponse(ctx: RequestContext, response: FilterResponse): void {
      const origin = ctx.headers.get('origin');
      if (origin === undefined || response.headers.has('access-control-allow-origin')) return;
      if (!any) response.headers.append('vary', 'Origin');
      if (!allows(origin)) return;
      response.headers.set('access-control-allow-origin', allowOrigin(origin));
      if (opts.credentials === true) response.headers.set('access-control-allow-credentials', 'true');
      if (expose !== undefined) response.headers.set('access-control-expose-headers', expose);
    },
  };
}

/** Reads the options the config file gives (`FilterContext.options`); throws naming the bad option. */
export function corsOptions(options: Readonly<Record<string, unknown>>): CorsOptions {
  const list = (name: string): readonly string[] | undefined => {
    const v = options[name];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`cors: options.${name} must be a list of strings`);
    return v as string[];
  };
  const origins = options.origins === '*' ? '*' : list('origins');
  if (origins === undefined) throw new Error('cors: options.origins is required (a list of origins, or "*")');
  const maxAge = options.maxAgeSeconds;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0)) throw new Error('cors: options.maxAgeSeconds must be a whole number');
  const credentials = options.credentials;
  if (credentials !== undefined && typeof credentials !== 'boolean') throw new Error('cors: options.credentials must be true or false');
  const methods = list('methods');
  const headers = list('headers');
  const exposeHeaders = list('exposeHeaders');
  return {
    origins,
    ...(methods && { methods }),
    ...(headers && { headers }),
    ...(exposeHeaders && { exposeHeaders }),
    ...(credentials !== undefined && { credentials }),
    ...(maxAge !== undefined && { maxAgeSeconds: maxAge as number }),
  };
}

const factory: FilterFactory = ({ options }) => createCorsFilter(corsOptions(options));
export default factory;
