/**
 * Test helper: the admin-guard checks every component's end-to-end test runs against a real admin listener that
 * was started with an admin token. A cross-site simple request (text/plain, foreign Origin) and a DNS-rebinding
 * Host are refused with 403 even with the token; without the token the call is 401; with it, it succeeds; reads
 * stay open.
 */
import assert from 'node:assert/strict';
import { request } from 'undici';

export interface GuardedCall {
  readonly method: 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
}

interface Answer {
  readonly status: number;
  readonly code: string | undefined;
}

async function send(admin: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  // A DELETE carries no body (fastify refuses an empty body that declares a content type).
  const hasBody = method !== 'DELETE';
  const sent = hasBody ? { 'content-type': 'application/json', ...headers } : headers;
  const res = await request(`http://${admin}${path}`, { method: method as 'POST', headers: sent, ...(hasBody ? { body: '{}' } : {}) });
  const text = await res.body.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {
    code = undefined;
  }
  return { status: res.statusCode, code };
}

/** `admin` is the bound `127.0.0.1:port`; `read` a GET path that must stay open. */
export async function assertAdminGuarded(admin: string, token: string, calls: readonly GuardedCall[], read = '/stats'): Promise<void> {
  const port = admin.slice(admin.lastIndexOf(':') + 1);
  const auth = { authorization: `Bearer ${token}` };
  for (const { method, path } of calls) {
    const what = `${method} ${path}`;
    const crossSite = await send(admin, method, path, { ...auth, 'content-type': 'text/plain', origin: 'https://evil.example' });
    assert.deepEqual(crossSite, { status: 403, code: 'ADMIN_FOREIGN_ORIGIN' }, `${what} with a foreign Origin`);
    const rebound = await send(admin, method, path, { ...auth, 'content-type': 'text/plain', host: `rebind.evil.example:${port}` });
    assert.deepEqual(rebound, { status: 403, code: 'ADMIN_FOREIGN_HOST' }, `${what} with a rebinding Host`);
    const anonymous = await send(admin, method, path, {});
    assert.deepEqual(anonymous, { status: 401, code: 'ADMIN_TOKEN_REQUIRED' }, `${what} without the token`);
    const wrong = await send(admin, method, path, { authorization: `Bearer ${token}x` });
    assert.equal(wrong.status, 401, `${what} with a wrong token`);
    const allowed = await send(admin, method, path, auth);
    assert.equal(allowed.status, 200, `${what} with the token`);
  }
  const res = await request(`http://${admin}${read}`, { headers: { host: `rebind.evil.example:${port}`, origin: 'https://evil.example' } });
  await res.body.text();
  assert.equal(res.statusCode, 200, `GET ${read} stays open`);
}
