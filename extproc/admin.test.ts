/** extproc's admin app: /ready in each state, /stats/reset answering the fresh document, /metrics. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Readiness, ReadinessReport } from '../lib/ops-routes.js';
import { buildAdmin } from './admin.js';
import { ExtprocMetrics } from './metrics.js';
import { ParkingLot } from '../lib/resume/parking-lot.js';

test('/ready follows the readiness: NOT_READY (with the reason), LIVE, DRAINING; /live stays 200', async () => {
  let readiness: Readiness | ReadinessReport = 'not-ready';
  const app = buildAdmin(new ExtprocMetrics(() => new ParkingLot(1)), () => readiness);
  const starting = await app.inject({ method: 'GET', url: '/ready' });
  assert.equal(starting.statusCode, 503);
  assert.equal(starting.body, 'NOT_READY\nstarting\n');
  readiness = { state: 'not-ready', reasons: ['control plane 127.0.0.1:50052: unreachable (No connection established)'] };
  const down = await app.inject({ method: 'GET', url: '/ready' });
  assert.deepEqual([down.statusCode, down.body], [503, 'NOT_READY\ncontrol plane 127.0.0.1:50052: unreachable (No connection established)\n']);
  assert.equal((await app.inject({ method: 'GET', url: '/live' })).statusCode, 200);
  readiness = 'live';
  const live = await app.inject({ method: 'GET', url: '/ready' });
  assert.equal(live.statusCode, 200);
  assert.equal(live.body, 'LIVE\n');
  readiness = 'draining';
  const draining = await app.inject({ method: 'GET', url: '/ready' });
  assert.equal(draining.statusCode, 503);
  assert.equal(draining.body, 'DRAINING\n');
  await app.close();
});

test('POST /stats/reset answers the zeroed /stats document; /metrics keeps lifetime counts', async () => {
  const metrics = new ExtprocMetrics(() => new ParkingLot(1));
  const app = buildAdmin(metrics, () => 'live');
  metrics.streamOpened();
  metrics.resumeCall('OK');
  metrics.request('ok', 'triggered', 0.01);
  const before = (await app.inject({ method: 'GET', url: '/stats' })).json();
  assert.equal(before.streams.total, 1);
  assert.equal(before.resumeCalls.OK, 1);
  const reset = await app.inject({ method: 'POST', url: '/stats/reset' });
  assert.equal(reset.statusCode, 200);
  const fresh = reset.json();
  assert.deepEqual(Object.keys(fresh).sort(), Object.keys(before).sort());
  assert.equal(fresh.streams.total, 0);
  assert.equal(fresh.streams.active, 1, 'a gauge is not reset');
  assert.equal(fresh.resumeCalls.OK, 0);
  assert.equal(fresh.requests.ok, 0);
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(text, /^actor_edge_extproc_streams_total 1$/m);
  assert.match(text, /^actor_edge_extproc_resume_calls_total\{code="OK"\} 1$/m);
  assert.match(text, /^actor_edge_extproc_build_info\{version="[^"]+",node_version="[^"]+"\} 1$/m);
  assert.match(text, /^actor_edge_extproc_ready 0$/m, 'not ready until the server says so');
  for (const line of text.split('\n')) {
    const name = /^(?:# (?:HELP|TYPE) )?([a-z_:][a-z0-9_:]*)/.exec(line)?.[1];
    if (name !== undefined) assert.match(name, /^(actor_edge_extproc_|process_|nodejs_)/, `${name}: one prefix`);
  }
  await app.close();
});
