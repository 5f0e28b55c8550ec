/** A minimal RequestContext for testing filters without a proxy (what a filter author's own tests can use). */
import { pino } from 'pino';
import type { HeaderMap, RequestContext } from '../../proxy/api/public.js';

function headerMap(init: Record<string, string>): HeaderMap {
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

export function fakeContext(authority: string, headers: Record<string, string> = {}, attempt = 0): RequestContext {
  return {
    requestId: 'test-request',
    method: 'GET',
    path: '/',
    authority,
    scheme: 'http',
    protocol: 'http/1.1',
    remoteAddress: '127.0.0.1',
    headers: headerMap({ host: authority, ...headers }),
    attempt,
    route: undefined,
    locals: new Map(),
    log: pino({ level: 'silent' }),
  };
}
