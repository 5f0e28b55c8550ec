import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { readyAnswer, registerOpsRoutes, type Readiness } from './ops-routes.js';
import { scrapedCounter } from './prom-metrics.js';

test('/ready: 200 LIVE, else 503 NOT_READY or DRAINING', () => {
  assert.deepEqual(readyAnswer('live'), { status: 200, body: 'LIVE\n' });
  assert.deepEqual(readyAnswer('not-ready'), { status: 503, body: 'NOT_READY\n' });
  assert.deepEqual(readyAnswer('draining'), { status: 503, body: 'DRAINING\n' });
});

test('the ops routes: /live, /ready, /stats, /stats/reset answering the fresh /stats, /metrics; refresh runs before each read', async () => {
  let readiness: Readiness = 'not-ready';
  let total = 3;
  let base = 0;
  let refreshes = 0;
  const registry = new Registry();
  scrapedCounter(registry, { name: 'things_total', help: 'Things.', read: () => total });
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, {
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
