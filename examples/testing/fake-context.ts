/** A minimal RequestContext for testing filters without a proxy (what a filter author's own tests can use). */
import { pino } from 'pino';
import type { FilterContext, FilterResponse, HeaderMap, RequestContext } from '../../proxy/api/public.js';

export function headerMap(init: Record<string, string> = {}): HeaderMap {
  const m = new Map<string, string[]>(Object.entries(init).map(([k, v]) => [k.toLowerCase(), [v]]));
  return {
    get: (n) => m.get(n.toLowerCase())?.[0],
    getAll: (n) => m.get(n.toLowerCase()) ?? [],
    has: (n) => m.has(n.toLowerCase()),
    set: (n, v) => void m.set(n.toLowerCase(), [v]),
    append: (n, v) => void m.set(n.toLowerCase(), [...(m.get(n.toLowerCase()) ?? []), v]),
    delete: (n) => void m.delete(n.toLowerCase()),
    *entries() {
      for (const [k, vs] of m) for (const v of vs) yield [k, v] as [string, string];
    },
  };
}

export interface FakeRequest {
  readonly method?: string;
  readonly path?: string;
  readonly body?: string;
  readonly attempt?: number;
}

export function fakeContext(authority: string, headers: Record<string, string> = {}, request: FakeRequest | number = {}): RequestContext {
  const r: FakeRequest = typeof request === 'number' ? { attempt: request } : request;
  const body = Buffer.from(r.body ?? '');
  return {
    requestId: 'test-request',
    method: r.method ?? 'GET',
    path: r.path ?? '/',
    originalPath: r.path ?? '/',
    authority,
    scheme: 'http',
    protocol: 'http/1.1',
    remoteAddress: '127.0.0.1',
    headers: headerMap({ host: authority, ...headers }),
    attempt: r.attempt ?? 0,
    route: undefined,
    locals: new Map(),
    log: pino({ level: 'silent' }),
    async readBody({ limit }) {
      if (body.length > limit) throw Object.assign(new Error('request body too large'), { status: 413 });
      return body;
    },
  };
}

/** A response as `onResponse` sees it. */
export function fakeResponse(status: number, headers: Record<string, string> = {}, source: 'upstream' | 'local' = 'upstream', errorCode?: string): FilterResponse {
  return { source, status, headers: headerMap(headers), errorCode };
}

/** What a factory receives when the proxy loads it. */
export function fakeFilterContext(options: Record<string, unknown> = {}): FilterContext {
  return { log: pino({ level: 'silent' }), actorSuffix: 'actors.resources.substrate.ate.dev', options };
}
