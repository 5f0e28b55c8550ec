/**
 * Test helper: the admin-guard checks every component's end-to-end test runs against a real admin listener that
 * was started with an admin token. For state changes and reads alike: a cross-site request (foreign Origin) and a
 * DNS-rebinding Host are refused with 403 even with the token; without the token the call is 401; with it, it
 * succeeds (as a bearer token, or as the password of Basic credentials, which is what a browser sends). `curl -H
 * 'Host: rebind.evil.example' <admin>/cache` gets 403 with no token at all; only `/ready` and `/live` answer anyone.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { request } from 'undici';

const run = promisify(execFile);

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

/** The status curl gets for `GET path` with a rebinding Host and nothing else. */
async function curlRebinding(admin: string, path: string): Promise<number> {
  const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: rebind.evil.example', `http://${admin}${path}`]);
  return Number(stdout.trim());
}

/** The reads every component's admin serves (`lib/ops-routes.ts`): the counters, the metrics, the index, the server info. */
export const COMMON_READS: readonly string[] = Object.freeze(['/stats', '/metrics', '/', '/help', '/server_info']);

/**
 * `admin` is the bound `127.0.0.1:port`; `reads` GET paths the component serves (guarded like the calls, the
 * Basic form of the token included).
 */
export async function assertAdminGuarded(admin: string, token: string, calls: readonly GuardedCall[], reads: readonly string[] = COMMON_READS): Promise<void> {
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
  for (const path of reads) {
    const get = async (headers: Record<string, string>): Promise<number> => {
      const res = await request(`http://${admin}${path}`, { headers });
      await res.body.dump();
      return res.statusCode;
    };
    assert.equal(await get({ ...auth, host: `rebind.evil.example:${port}` }), 403, `GET ${path} with a rebinding Host`);
    assert.equal(await get({ ...auth, origin: 'https://evil.example' }), 403, `GET ${path} with a foreign Origin`);
    assert.equal(await get({}), 401, `GET ${path} without the token`);
    assert.equal(await get(auth), 200, `GET ${path} with the token`);
    assert.equal(await get({ authorization: `Basic ${Buffer.from(`browser:${token}`).toString('base64')}` }), 200, `GET ${path} with the token as a Basic password`);
  }
  for (const path of ['/cache', ...reads]) assert.equal(await curlRebinding(admin, path), 403, `curl -H 'Host: rebind.evil.example' ${path}`);
  // The health checks answer anyone, whatever the readiness is (a dependency may be down in the test).
  for (const path of ['/ready', '/live']) {
    const probe = await request(`http://${admin}${path}`, { headers: { host: `rebind.evil.example:${port}`, origin: 'https://evil.example' } });
    const state = (await probe.body.text()).split('\n')[0];
    assert.ok([200, 503].includes(probe.statusCode) && ['LIVE', 'NOT_READY', 'DRAINING'].includes(state ?? ''), `GET ${path} answers anyone: ${probe.statusCode} ${state}`);
    if (path === '/live') assert.equal(probe.statusCode, 200, 'GET /live answers anyone');
  }
}
