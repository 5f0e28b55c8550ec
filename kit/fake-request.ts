/**
 * Fakes of what the proxy hands a filter — the request (`RequestContext`), the response head (`FilterResponse`) and
 * the factory's `FilterContext` — for unit tests that call a filter's hooks directly, without a proxy. They keep
 * the proxy's header rules a filter can trip over in a unit test (lower-case names, `host` fixed), not all of them:
 * the proxy also refuses invalid names and values and hop-by-hop headers, which the end-to-end stack
 * (`startTestStack`) exercises.
 */
import { pino } from 'pino';
import { DEFAULT_ACTOR_SUFFIX } from '../lib/actor-ref.js';
import type { ClientProtocol, FilterContext, FilterResponse, HeaderMap, RequestContext } from '../proxy/api/filter.js';

/** The atespace the test stack's apiserver-stub seeds its demo actors in. */
export const TEST_ATESPACE = 'demo';

/** The authority of `actor` (`<actor>.<atespace>.<suffix>`), as a client of the proxy sends it. */
export function actorAuthority(actor: string, atespace: string = TEST_ATESPACE, suffix: string = DEFAULT_ACTOR_SUFFIX): string {
  return `${actor}.${atespace}.${suffix}`;
}

/** Headers as the proxy gives them to a filter: names compare case-insensitively; `fixed` names cannot change. */
export function fakeHeaders(init: Readonly<Record<string, string>> = {}, fixed: readonly string[] = []): HeaderMap {
  const m = new Map<string, string[]>(Object.entries(init).map(([k, v]) => [k.toLowerCase(), [v]]));
  const changeable = (name: string): string => {
    const n = name.toLowerCase();
    if (fixed.includes(n)) throw new TypeError(`the ${n} header cannot be changed by a filter`);
    return n;
  };
  return {
    get: (n) => m.get(n.toLowerCase())?.[0],
    getAll: (n) => m.get(n.toLowerCase()) ?? [],
    has: (n) => m.has(n.toLowerCase()),
    set: (n, v) => void m.set(changeable(n), [v]),
    append: (n, v) => void m.set(changeable(n), [...(m.get(n.toLowerCase()) ?? []), v]),
    delete: (n) => void m.delete(changeable(n)),
    *entries() {
      for (const [k, vs] of m) for (const v of vs) yield [k, v] as [string, string];
    },
  };
}

export interface FakeRequestInit {
  /** The actor the request is for (default `actor-000`); its authority is `actorAuthority(actor)`. */
  readonly actor?: string;
  /** The request's authority (Host) as it is, instead of `actor`'s. */
  readonly authority?: string;
  readonly method?: string;
  /** Path and query, origin-form (default `/`). */
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** What `ctx.readBody()` resolves with (default: empty). */
  readonly body?: string | Uint8Array;
  /** 0 for the first pass (default), 1, 2, ... for re-runs. */
  readonly attempt?: number;
  readonly scheme?: 'http' | 'https';
  readonly protocol?: ClientProtocol;
  readonly remoteAddress?: string;
  readonly requestId?: string;
  /** Passed on as `ctx.signal` (abort it to test a filter's handling of a client that went away). */
  readonly signal?: AbortSignal;
}

/**
 * A request as a filter's hooks see it. `ctx.headers` is what would be forwarded upstream, `host` included (and
 * fixed, as in the proxy); `ctx.readBody({ limit })` rejects beyond `limit` with an error carrying `status: 413`
 * and the code the proxy answers with (`PROXY_ERR_BODY_TOO_LARGE`).
 */
export function fakeRequest(init: FakeRequestInit = {}): RequestContext {
  const authority = init.authority ?? actorAuthority(init.actor ?? 'actor-000');
  const body = typeof init.body === 'string' ? Buffer.from(init.body) : (init.body ?? new Uint8Array(0));
  const path = init.path ?? '/';
  return {
    requestId: init.requestId ?? 'test-request',
    method: init.method ?? 'GET',
    path,
    originalPath: path,
    authority,
    scheme: init.scheme ?? 'http',
    protocol: init.protocol ?? 'http/1.1',
    remoteAddress: init.remoteAddress ?? '127.0.0.1',
    headers: fakeHeaders({ host: authority, ...init.headers }, ['host']),
    attempt: init.attempt ?? 0,
    route: undefined,
    locals: new Map(),
    log: pino({ level: 'silent' }),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
    async readBody({ limit }) {
      if (body.length > limit) throw Object.assign(new Error(`request body too large (over ${limit} bytes)`), { status: 413, code: 'PROXY_ERR_BODY_TOO_LARGE' });
      return body;
    },
  };
}

export interface FakeResponseInit {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** `upstream` (default): the actor's answer; `local`: made by the proxy (a filter, ext_proc, an error). */
  readonly source?: 'upstream' | 'local';
  /** For the proxy's own errors: the catalog code (e.g. `PROXY_ERR_UPSTREAM_CONNECT`). */
  readonly errorCode?: string;
}

/** A response head as `onResponse` sees it; the filter's changes are read back from it. */
export function fakeResponse(init: FakeResponseInit = {}): FilterResponse {
  return { source: init.source ?? 'upstream', status: init.status ?? 200, headers: fakeHeaders(init.headers), errorCode: init.errorCode };
}

/** What a filter factory receives when the proxy loads it, with the filter's `options` (default none). */
export function fakeFilterContext(options: Readonly<Record<string, unknown>> = {}): FilterContext {
  return { log: pino({ level: 'silent' }), actorSuffix: DEFAULT_ACTOR_SUFFIX, options };
}
