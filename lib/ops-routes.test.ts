import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { readyAnswer, registerOpsRoutes, type Readiness, type ReadinessReport } from './ops-routes.js';
import { scrapedCounter } from './prom-metrics.js';
import { BUILD_INFO } from './build-info.js';

test('/ready: 200 LIVE, else 503 NOT_READY or DRAINING, with one line per reason', () => {
  assert.deepEqual(readyAnswer('live'), { status: 200, body: 'LIVE\n' });
  assert.deepEqual(readyAnswer('not-ready'), { status: 503, body: 'NOT_READY\nstarting\n' });
  assert.deepEqual(readyAnswer('draining'), { status: 503, body: 'DRAINING\n' });
  assert.deepEqual(readyAnswer({ state: 'not-ready', reasons: ['ext_proc 127.0.0.1:1: unreachable', 'other'] }), {
    status: 503,
    body: 'NOT_READY\next_proc 127.0.0.1:1: unreachable\nother\n',
  });
});

function logSink(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { log, lines };
}

test('the ops routes: /live, /ready, /stats, /stats/reset answering the fresh /stats, /metrics; refresh runs before each read', async () => {
  let readiness: Readiness | ReadinessReport = 'not-ready';
  let total = 3;
  let base = 0;
  let refreshes = 0;
  const registry = new Registry();
  scrapedCounter(registry, { name: 'things_total', help: 'Things.', read: () => total });
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, {
    component: 'thing',
    readiness: () => readiness,
    stats: () => ({ things: total - base }),
    resetStats: () => {
      base = total;
    },
    registry,
    refresh: async () => {
      refreshes++;
    },
  });
  assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 503);
  // Liveness is not readiness: a process that is starting or draining is alive.
  for (const r of ['not-ready', 'draining'] as const) {
    readiness = r;
    const live = await app.inject({ method: 'GET', url: '/live' });
    assert.equal(live.statusCode, 200);
    assert.equal(live.body, 'LIVE\n');
    assert.equal(live.headers['content-type'], 'text/plain');
    assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 503);
  }
  assert.equal((await app.inject({ method: 'POST', url: '/live' })).statusCode, 404);
  readiness = { state: 'not-ready', reasons: ['ext_proc 127.0.0.1:9: unreachable (connection refused)'] };
  const json = await app.inject({ method: 'GET', url: '/ready', headers: { accept: 'application/json' } });
  assert.equal(json.statusCode, 503);
  assert.deepEqual(json.json(), { state: 'NOT_READY', ready: false, reasons: ['ext_proc 127.0.0.1:9: unreachable (connection refused)'] });
  readiness = 'live';
  const ready = await app.inject({ method: 'GET', url: '/ready' });
  assert.equal(ready.statusCode, 200);
  assert.equal(ready.body, 'LIVE\n');
  assert.equal(ready.headers['content-type'], 'text/plain');
  assert.deepEqual((await app.inject({ method: 'GET', url: '/stats' })).json(), { things: 3 });
  const reset = await app.inject({ method: 'POST', url: '/stats/reset' });
  assert.equal(reset.statusCode, 200);
  assert.deepEqual(reset.json(), { things: 0 });
  const metrics = await app.inject({ method: 'GET', url: '/metrics' });
  assert.match(metrics.body, /^things_total 3$/m);
  assert.match(String(metrics.headers['content-type']), /^text\/plain/);
  assert.equal(refreshes, 3);
  await app.close();
});

test('GET / lists every endpoint with what it does (JSON, or HTML for a browser), /server_info says which build runs', async () => {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, { component: 'thing', readiness: () => 'live', stats: () => ({}), resetStats: () => undefined, registry: new Registry() });
  app.delete('/things/:id', { config: { description: 'forgets one <thing>' } }, async () => ({}));
  app.get('/secret', { config: { hidden: true } }, async () => ({}));
  const index = (await app.inject({ method: 'GET', url: '/' })).json() as { component: string; version: string; endpoints: { method: string; path: string; description: string; changesState: boolean }[] };
  assert.equal(index.component, 'thing');
  assert.equal(index.version, BUILD_INFO.version);
  const listed = index.endpoints.map((e) => `${e.method} ${e.path}`);
  for (const e of ['GET /', 'GET /help', 'GET /server_info', 'GET /live', 'GET /ready', 'GET /stats', 'POST /stats/reset', 'GET /metrics', 'DELETE /things/:id']) {
    assert.ok(listed.includes(e), e);
  }
  assert.ok(!listed.some((e) => e.startsWith('HEAD ')), 'HEAD twins are not listed');
  assert.ok(!listed.includes('GET /secret'), 'hidden routes are not listed');
  assert.deepEqual(index.endpoints.find((e) => e.path === '/things/:id'), { method: 'DELETE', path: '/things/:id', description: 'forgets one <thing>', changesState: true });
  assert.equal(index.endpoints.find((e) => e.path === '/stats')?.changesState, false);
  assert.deepEqual((await app.inject({ method: 'GET', url: '/help' })).json(), index);
  const html = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,*/*' } });
  assert.match(String(html.headers['content-type']), /^text\/html/);
  assert.match(html.body, /<a href="\/stats">\/stats<\/a>/);
  assert.match(html.body, /forgets one &#60;thing&#62;/, 'descriptions are escaped');
  const info = (await app.inject({ method: 'GET', url: '/server_info' })).json() as Record<string, unknown>;
  assert.deepEqual([info.component, info.version, info.nodeVersion, info.pid, info.state], ['thing', BUILD_INFO.version, process.versions.node, process.pid, 'LIVE']);
  assert.deepEqual(info.v8Flags, [], 'this process set no V8 flags of its own');
  assert.equal(typeof info.uptimeSeconds, 'number');
  await app.close();
});

test('an unknown route and fastify\'s own errors answer the product\'s {error, code}', async () => {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, { component: 'thing', readiness: () => 'live', stats: () => ({}), resetStats: () => undefined, registry: new Registry() });
  for (const url of ['/config_dump', '/nope?x=1']) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'error']);
    assert.equal(res.json().code, 'ROUTE_NOT_FOUND');
    assert.match(res.json().error, /GET \/(config_dump|nope) .*GET \/ lists them/);
  }
  const bad = await app.inject({ method: 'POST', url: '/stats/reset', headers: { 'content-type': 'application/json' }, payload: '{not json' });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(Object.keys(bad.json()).sort(), ['code', 'error']);
  assert.equal(bad.json().code, 'FST_ERR_CTP_INVALID_JSON_BODY');
  await app.close();
});

test('state-changing calls are logged with the caller\'s address and status; reads are not', async () => {
  const { log, lines } = logSink();
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, { component: 'thing', readiness: () => 'live', stats: () => ({}), resetStats: () => undefined, registry: new Registry(), log });
  app.addHook('onRequest', async (req, reply) => {
    if (req.url === '/stats/reset' && req.headers.authorization === undefined) return reply.code(401).send({ error: 'no', code: 'ADMIN_TOKEN_REQUIRED' });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    await (await fetch(`${base}/stats`)).text();
    await (await fetch(`${base}/stats/reset`, { method: 'POST', headers: { authorization: 'Bearer x' } })).text();
    await (await fetch(`${base}/stats/reset`, { method: 'POST' })).text();
    assert.equal(lines.length, 2, 'only the two POSTs');
    const [ok, refused] = lines as [Record<string, any>, Record<string, any>];
    assert.equal(ok.msg, 'admin call');
    assert.equal(ok.level, 30);
    assert.deepEqual([ok.admin.method, ok.admin.url, ok.admin.status], ['POST', '/stats/reset', 200]);
    assert.match(ok.admin.client, /^127\.0\.0\.1:\d+$/);
    assert.equal(refused.msg, 'admin call refused');
    assert.equal(refused.level, 40);
    assert.equal(refused.admin.status, 401);
  } finally {
    await app.close();
  }
});
