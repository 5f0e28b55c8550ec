/**
 * End to end, cache off: outages and process lifecycle with real apiserver-stub, extproc and proxy processes —
 * the control plane down (503 from ext_proc), ext_proc down (500 fast, recovery without a restart), SIGTERM
 * draining in-flight requests, and `--workers 2` sharing one listener.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { freePort } from '../../lib/loopback.js';
import {
  actorName,
  adminJson,
  client,
  proxyStats,
  send,
  startExtproc,
  startProxy,
  startStub,
  until,
  type Extproc,
  type Proxy,
  type Stub,
} from '../testing/stack.js';

let stub: Stub;
let extproc: Extproc;
let extprocAddress: string;

before(async () => {
  stub = await startStub({ workers: 4, capacity: 4, actors: 10 });
  extprocAddress = `127.0.0.1:${await freePort()}`;
  extproc = await startExtproc(stub, [], extprocAddress);
});

after(async () => {
  await extproc?.component.stop();
  await stub?.component.stop();
  await client.close();
});

test('control plane down: ext_proc answers 503 and the client gets it as sent', async () => {
  const dead = await startExtproc({ ...stub, grpc: `127.0.0.1:${await freePort()}` }, ['--resume-budget-ms', '1000']);
  const proxy = await startProxy(dead.grpc, ['--actor-cache', 'off']);
  try {
    const a = await send(proxy, actorName(0));
    assert.equal(a.status, 503);
    assert.match(a.text, /unavailable/i);
    assert.equal((await proxyStats(proxy)).extproc.active, 0);
  } finally {
    await proxy.component.stop();
    await dead.component.stop();
  }
});

test('ext_proc down → 500 fast; the proxy recovers when it comes back, without a restart', async () => {
  const proxy = await startProxy(extprocAddress, ['--actor-cache', 'off']);
  try {
    assert.equal((await send(proxy, actorName(1))).status, 200);
    assert.equal(await extproc.component.stop(), 0);
    const started = Date.now();
    const down = await send(proxy, actorName(1));
    assert.equal(down.status, 500);
    assert.ok(Date.now() - started < 2000, 'fails fast');
    extproc = await startExtproc(stub, [], extprocAddress);
    await until(async () => (await send(proxy, actorName(1))).status === 200, 10_000, 'recovery');
    const s = await proxyStats(proxy);
    assert.ok(s.extproc.errors >= 1);
    assert.equal(s.extproc.active, 0);
  } finally {
    await proxy.component.stop();
  }
});

test('SIGTERM: readiness fails, in-flight requests finish, the process exits 0', async () => {
  const proxy = await startProxy(extprocAddress, ['--actor-cache', 'off', '--drain-timeout-ms', '5000']);
  assert.equal((await send(proxy, actorName(2))).status, 200);
  const inflight = send(proxy, actorName(2), { path: '/?delay_ms=800', requestId: 'in-flight' });
  await until(async () => (await adminJson<{ requestIds: string[] }>(stub.admin, `/actors/demo/${actorName(2)}`)).requestIds.includes('in-flight'), 3000, 'the request to reach the actor');
  proxy.component.child.kill('SIGTERM');
  await until(async () => {
    const r = await request(`${proxy.admin}/ready`).catch(() => undefined);
    if (r === undefined) return false;
    await r.body.text();
    return r.statusCode === 503;
  }, 3000, '/ready to fail');
  const answer = await inflight;
  assert.equal(answer.status, 200);
  assert.equal(answer.app?.requestId, 'in-flight');
  assert.equal(await proxy.component.exited, 0);
  assert.ok(proxy.component.logs().some((l) => l.msg === 'stopped'));
});

test('--workers 2: two processes share the listener; /stats sums them', async () => {
  const proxy: Proxy = await startProxy(extprocAddress, ['--actor-cache', 'off', '--workers', '2']);
  try {
    const answers = await Promise.all(Array.from({ length: 40 }, () => send(proxy, actorName(3), { headers: { connection: 'close' } })));
    for (const a of answers) assert.equal(a.status, 200);
    const s = (await adminJson(proxy.admin, '/stats')) as Record<string, unknown> & { requests: { total: number }; workers: number };
    assert.equal(s.workers, 2);
    assert.ok(s.requests.total >= 40);
    const metrics = await request(`${proxy.admin}/metrics`);
    const text = await metrics.body.text();
    assert.match(text, /proxy_extproc_streams_total \d+/);
    const count = /^proxy_request_duration_seconds_count (\d+)/m.exec(text);
    assert.ok(count && Number(count[1]) >= 40, 'the workers\' duration histograms are merged');
    const ready = await request(`${proxy.admin}/ready`);
    assert.equal(await ready.body.text(), 'LIVE\n');
    const reset = await request(`${proxy.admin}/stats/reset`, { method: 'POST' });
    const fresh = (await reset.body.json()) as { requests: { total: number }; workers: number };
    assert.equal(fresh.workers, 2, 'the reset answers the fresh summed /stats');
    assert.equal(fresh.requests.total, 0);
    const pids = new Set(proxy.component.logs().map((l) => l.pid));
    assert.ok(pids.size >= 3, 'a primary and two workers logged');
    assert.equal(await proxy.component.stop(), 0);
  } finally {
    await proxy.component.stop();
  }
});
