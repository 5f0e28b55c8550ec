import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { decideAdminAccess, guardAdmin, parseAuthority, type AdminListener, type AdminRequest } from './admin-guard.js';

const LOOPBACK: AdminListener = { address: '127.0.0.1', port: 9901, ownAddresses: ['127.0.0.1', '::1', '172.18.0.5'] };
const WILDCARD: AdminListener = { address: '0.0.0.0', port: 9901, ownAddresses: ['127.0.0.1', '::1', '172.18.0.5'] };
const SPECIFIC: AdminListener = { address: '10.1.2.3', port: 9901, ownAddresses: ['127.0.0.1', '10.1.2.3', '10.9.0.4'] };
const V6_LOOPBACK: AdminListener = { address: '::1', port: 9901, ownAddresses: ['::1'] };

type Row = readonly [what: string, listener: AdminListener, req: Partial<AdminRequest>, token: string | undefined, expected: 'allow' | 401 | 403];

const basic = (credentials: string): string => `Basic ${Buffer.from(credentials).toString('base64')}`;

const rows: readonly Row[] = [
  // Health checks are answered to anyone; every other read is guarded like a write.
  ['GET /ready with a foreign Host and Origin, no token', LOOPBACK, { method: 'GET', path: '/ready', host: 'evil.example:9901', origin: 'http://evil.example' }, 'secret', 'allow'],
  ['HEAD /live with a foreign Host', LOOPBACK, { method: 'HEAD', path: '/live', host: 'evil.example' }, 'secret', 'allow'],
  ['POST /ready is not a health check', LOOPBACK, { method: 'POST', path: '/ready', host: 'evil.example:9901' }, undefined, 403],
  ['GET /ready/x is not a health check', LOOPBACK, { method: 'GET', path: '/ready/x', host: 'evil.example:9901' }, undefined, 403],
  ['GET /stats with a rebinding Host', LOOPBACK, { method: 'GET', path: '/stats', host: 'rebind.evil.example:9901' }, undefined, 403],
  ['GET /cache with a rebinding Host', LOOPBACK, { method: 'GET', path: '/cache', host: 'rebind.evil.example' }, undefined, 403],
  ['GET /metrics with a foreign Origin', LOOPBACK, { method: 'GET', path: '/metrics', host: '127.0.0.1:9901', origin: 'http://evil.example' }, undefined, 403],
  ['HEAD /stats with a foreign Host', LOOPBACK, { method: 'HEAD', path: '/stats', host: 'evil.example' }, undefined, 403],
  ['OPTIONS with a foreign Host', LOOPBACK, { method: 'OPTIONS', path: '/cache', host: 'evil.example' }, undefined, 403],
  ['GET /stats addressed directly', LOOPBACK, { method: 'GET', path: '/stats', host: '127.0.0.1:9901' }, undefined, 'allow'],
  ['GET /stats without the token', LOOPBACK, { method: 'GET', path: '/stats', host: '127.0.0.1:9901' }, 'secret', 401],
  ['GET /metrics with the token', LOOPBACK, { method: 'GET', path: '/metrics', host: '127.0.0.1:9901', authorization: 'Bearer secret' }, 'secret', 'allow'],
  // Loopback listener: loopback names with the right port.
  ['POST Host 127.0.0.1:port', LOOPBACK, { host: '127.0.0.1:9901' }, undefined, 'allow'],
  ['POST Host 127.3.4.5:port', LOOPBACK, { host: '127.3.4.5:9901' }, undefined, 'allow'],
  ['POST Host localhost:port', LOOPBACK, { host: 'LocalHost:9901' }, undefined, 'allow'],
  ['POST Host [::1]:port', LOOPBACK, { host: '[::1]:9901' }, undefined, 'allow'],
  ['POST Host [::1]:port, v6 listener', V6_LOOPBACK, { host: '[::1]:9901' }, undefined, 'allow'],
  ['POST Host with the wrong port', LOOPBACK, { host: '127.0.0.1:9902' }, undefined, 403],
  ['POST Host without a port', LOOPBACK, { host: '127.0.0.1' }, undefined, 403],
  ['POST rebinding Host', LOOPBACK, { host: 'rebind.evil.example:9901' }, undefined, 403],
  ['POST single-label Host on loopback', LOOPBACK, { host: 'proxy:9901' }, undefined, 403],
  ['POST a machine address on loopback', LOOPBACK, { host: '172.18.0.5:9901' }, undefined, 403],
  ['POST no Host', LOOPBACK, { host: undefined }, undefined, 403],
  ['POST malformed Host', LOOPBACK, { host: 'a b:9901' }, undefined, 403],
  ['DELETE rebinding Host', LOOPBACK, { method: 'DELETE', host: 'evil.example:9901' }, undefined, 403],
  ['PUT rebinding Host', LOOPBACK, { method: 'put', host: 'evil.example:9901' }, undefined, 403],
  // Origin: absent is fine; present must name the admin.
  ['POST own Origin', LOOPBACK, { host: '127.0.0.1:9901', origin: 'http://127.0.0.1:9901' }, undefined, 'allow'],
  ['POST own Origin by name', LOOPBACK, { host: '127.0.0.1:9901', origin: 'http://localhost:9901' }, undefined, 'allow'],
  ['POST foreign Origin', LOOPBACK, { host: '127.0.0.1:9901', origin: 'https://evil.example' }, undefined, 403],
  ['POST Origin on another local port', LOOPBACK, { host: '127.0.0.1:9901', origin: 'http://127.0.0.1:3000' }, undefined, 403],
  ['POST Origin null', LOOPBACK, { host: '127.0.0.1:9901', origin: 'null' }, undefined, 403],
  ['POST Origin of another scheme', LOOPBACK, { host: '127.0.0.1:9901', origin: 'file://' }, undefined, 403],
  // Wildcard listener: the machine's addresses, localhost and single-label names, any port.
  ['wildcard: a machine address', WILDCARD, { host: '172.18.0.5:9901' }, undefined, 'allow'],
  ['wildcard: published loopback port', WILDCARD, { host: '127.0.0.1:19901' }, undefined, 'allow'],
  ['wildcard: a service name', WILDCARD, { host: 'proxy:9901' }, undefined, 'allow'],
  ['wildcard: localhost', WILDCARD, { host: 'localhost:9901' }, undefined, 'allow'],
  ['wildcard: an address of another machine', WILDCARD, { host: '10.9.9.9:9901' }, undefined, 403],
  ['wildcard: a dotted name', WILDCARD, { host: 'rebind.evil.example:9901' }, undefined, 403],
  ['wildcard: foreign Origin', WILDCARD, { host: 'proxy:9901', origin: 'http://evil.example:9901' }, undefined, 403],
  ['wildcard: own Origin', WILDCARD, { host: 'proxy:9901', origin: 'http://proxy:9901' }, undefined, 'allow'],
  // A specific non-loopback address.
  ['specific: its address', SPECIFIC, { host: '10.1.2.3:9901' }, undefined, 'allow'],
  ['specific: a published loopback port', SPECIFIC, { host: '127.0.0.1:19901' }, undefined, 'allow'],
  ['specific: a network alias', SPECIFIC, { host: 'proxy-control:9901' }, undefined, 'allow'],
  ['specific: an address of another machine', SPECIFIC, { host: '10.1.2.4:9901' }, undefined, 403],
  ['specific: a dotted name', SPECIFIC, { host: 'proxy.evil.example:9901' }, undefined, 403],
  // Token.
  ['token: missing', LOOPBACK, { host: '127.0.0.1:9901' }, 'secret', 401],
  ['token: wrong', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'Bearer secreT' }, 'secret', 401],
  ['token: a prefix', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'Bearer secre' }, 'secret', 401],
  ['token: not bearer', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'Basic secret' }, 'secret', 401],
  ['token: right', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'Bearer secret' }, 'secret', 'allow'],
  ['token: right, scheme in any case', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'bearer secret' }, 'secret', 'allow'],
  ['token: Basic, the token as the password', LOOPBACK, { host: '127.0.0.1:9901', authorization: basic('admin:secret') }, 'secret', 'allow'],
  ['token: Basic, any user name', LOOPBACK, { method: 'GET', path: '/dashboard', host: '127.0.0.1:9901', authorization: basic(':secret') }, 'secret', 'allow'],
  ['token: Basic, a colon in the token', LOOPBACK, { host: '127.0.0.1:9901', authorization: basic('u:se:cret') }, 'se:cret', 'allow'],
  ['token: Basic, the wrong password', LOOPBACK, { host: '127.0.0.1:9901', authorization: basic('admin:secreT') }, 'secret', 401],
  ['token: Basic, the token as the user name', LOOPBACK, { host: '127.0.0.1:9901', authorization: basic('secret:') }, 'secret', 401],
  ['token: Basic without a colon', LOOPBACK, { host: '127.0.0.1:9901', authorization: basic('secret') }, 'secret', 401],
  ['token: Basic, not base64', LOOPBACK, { host: '127.0.0.1:9901', authorization: 'Basic secret!' }, 'secret', 401],
  ['token: Basic, right but a rebinding Host', LOOPBACK, { method: 'GET', path: '/dashboard', host: 'rebind.evil.example:9901', authorization: basic('admin:secret') }, 'secret', 403],
  ['token: right but a rebinding Host', LOOPBACK, { host: 'evil.example:9901', authorization: 'Bearer secret' }, 'secret', 403],
];

for (const [what, listener, partial, token, expected] of rows) {
  test(`admin guard: ${what} → ${expected}`, () => {
    const req: AdminRequest = { method: 'POST', path: '/stats/reset', host: undefined, origin: undefined, authorization: undefined, ...partial };
    const d = decideAdminAccess(req, listener, token);
    if (expected === 'allow') assert.equal(d.kind, 'allow', JSON.stringify(d));
    else {
      assert.equal(d.kind, 'refuse');
      assert.equal(d.kind === 'refuse' && d.status, expected);
    }
  });
}

test('parseAuthority: default port, brackets, case; malformed → undefined', () => {
  assert.deepEqual(parseAuthority('Example:8080'), { hostname: 'example', port: 8080 });
  assert.deepEqual(parseAuthority('[::1]'), { hostname: '::1', port: 80 });
  assert.deepEqual(parseAuthority('example', 443), { hostname: 'example', port: 443 });
  for (const bad of ['', 'a:99999', '[zz]:1', 'user@host:1', 'a:b:c']) assert.equal(parseAuthority(bad), undefined, bad);
});

test('guardAdmin: the hook answers a refusal with JSON, covers routes registered later and reads, leaves /ready open', async () => {
  const app = Fastify();
  guardAdmin(app, { token: 'secret' });
  await app.register(async (child) => {
    child.delete('/cache', async () => ({ evicted: 0 }));
    child.get('/cache', async () => ({ entries: [] }));
    child.get('/ready', async () => 'LIVE\n');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const port = (app.server.address() as { port: number }).port;
    const host = `127.0.0.1:${port}`;
    const read = await app.inject({ method: 'GET', url: '/cache?limit=1', headers: { host: 'evil.example' } });
    assert.equal(read.statusCode, 403);
    assert.equal(read.json<{ code: string }>().code, 'ADMIN_FOREIGN_HOST');
    const unknown = await app.inject({ method: 'GET', url: '/nothing-here', headers: { host: 'evil.example' } });
    assert.equal(unknown.statusCode, 403, 'refused before routing, also where no route is');
    const ready = await app.inject({ method: 'GET', url: '/ready', headers: { host: 'evil.example' } });
    assert.equal(ready.statusCode, 200, 'the health check answers anyone');
    const readNoToken = await app.inject({ method: 'GET', url: '/cache', headers: { host } });
    assert.equal(readNoToken.statusCode, 401);
    const readToken = await app.inject({ method: 'GET', url: '/cache', headers: { host, authorization: 'Bearer secret' } });
    assert.equal(readToken.statusCode, 200);
    const foreign = await app.inject({ method: 'DELETE', url: '/cache', headers: { host, origin: 'http://evil.example' } });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json<{ code: string }>().code, 'ADMIN_FOREIGN_ORIGIN');
    const noToken = await app.inject({ method: 'DELETE', url: '/cache', headers: { host } });
    assert.equal(noToken.statusCode, 401);
    assert.deepEqual(noToken.headers['www-authenticate'], ['Bearer realm="actor-edge admin"', 'Basic realm="actor-edge admin", charset="UTF-8"'], 'a browser is offered its login prompt');
    assert.equal(noToken.json<{ code: string }>().code, 'ADMIN_TOKEN_REQUIRED');
    const ok = await app.inject({ method: 'DELETE', url: '/cache', headers: { host, authorization: 'Bearer secret' } });
    assert.equal(ok.statusCode, 200);
  } finally {
    await app.close();
  }
});
