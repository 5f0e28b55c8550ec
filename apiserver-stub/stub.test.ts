import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { status } from '@grpc/grpc-js';
import type * as api from './ateapi-types.js';
import { actorHost } from '../lib/testing/actors.js';
import { eventually } from '../lib/testing/wait.js';
import { checkHealth, createHealthClient } from '../lib/grpc-health.js';
import { admin, workerRequest } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

const HOST = actorHost;

describe('apiserver-stub control plane and workers', () => {
  let s: TestStub;
  before(async () => {
    s = await startTestStub({ workers: 12 });
  });
  after(async () => {
    await s.close();
  });

  const get = (ip: string, name: string, extra: Partial<Parameters<typeof workerRequest>[0]> = {}) =>
    workerRequest({ ip, port: s.port, host: HOST(name), path: '/hello', ...extra });

  async function resumeOk(name: string): Promise<api.ActorMessage> {
    const r = await s.client.resume(name);
    assert.ok(r.ok, `resume ${name}: ${r.ok ? '' : r.details}`);
    return r.value.actor;
  }

  test('resuming a suspended actor places it on one worker, which serves it; every other worker answers 421 + stale', async () => {
    const before = await s.client.call<api.ActorResponse>('GetActor', { actor_ref: { atespace: 'demo', name: 'actor-001' } });
    assert.ok(before.ok);
    assert.equal(before.value.actor.status, 'STATUS_SUSPENDED');
    assert.equal(before.value.actor.ateom_pod_ip, '');

    const actor = await resumeOk('actor-001');
    assert.equal(actor.status, 'STATUS_RUNNING');
    assert.equal(actor.atespace, 'demo');
    assert.ok(s.workers.includes(actor.ateom_pod_ip), `placed on ${actor.ateom_pod_ip}`);

    const res = await get(actor.ateom_pod_ip, 'actor-001', {
      method: 'POST',
      path: '/some/path?echo_headers=1',
      body: 'hello',
      headers: { 'x-request-id': 'req-1', 'x-ate-target-port': '8080', 'ate-target-actor': 'demo/actor-001' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-ate-assignment-stale'], undefined);
    const body = JSON.parse(res.body) as Record<string, unknown> & { headers: Record<string, string> };
    assert.equal(body.atespace, 'demo');
    assert.equal(body.actor, 'actor-001');
    assert.equal(body.worker, actor.ateom_pod_ip);
    assert.equal(body.method, 'POST');
    assert.equal(body.path, '/some/path');
    assert.equal(body.seq, 1);
    assert.equal(body.bodyLength, 5);
    assert.equal(body.bodySha256, createHash('sha256').update('hello').digest('hex'));
    assert.equal(body.requestId, 'req-1');
    assert.equal(body.headers['x-ate-target-port'], undefined, 'routing header reached the actor');
    assert.equal(body.headers['ate-target-actor'], undefined, 'routing header reached the actor');
    assert.equal(body.headers['x-request-id'], 'req-1');

    for (const ip of s.workers.filter((w) => w !== actor.ateom_pod_ip)) {
      const other = await get(ip, 'actor-001');
      assert.equal(other.status, 421, ip);
      assert.equal(other.headers['x-ate-assignment-stale'], 'true');
      assert.equal(other.body, 'misdirected request');
    }
    // The serving worker rejects actors it does not host, and hosts that name no actor.
    assert.equal((await get(actor.ateom_pod_ip, 'actor-002')).status, 421);
    const bare = await workerRequest({ ip: actor.ateom_pod_ip, port: s.port, host: 'example.com' });
    assert.equal(bare.status, 421);
    assert.equal(bare.headers['x-ate-assignment-stale'], 'true');
  });

  test('ResumeActor on a running actor changes nothing', async () => {
    const first = await resumeOk('actor-001');
    const stats1 = await admin<{ placements: number }>(s.admin, 'GET', '/stats');
    const again = await resumeOk('actor-001');
    assert.equal(again.status, 'STATUS_RUNNING');
    assert.equal(again.ateom_pod_ip, first.ateom_pod_ip);
    assert.equal(again.version, first.version);
    const stats2 = await admin<{ placements: number }>(s.admin, 'GET', '/stats');
    assert.equal(stats2.body.placements, stats1.body.placements);
  });

  test('suspend makes the old worker answer 421; the actor keeps its state across activations', async () => {
    const actor = await resumeOk('actor-003');
    const r1 = await get(actor.ateom_pod_ip, 'actor-003');
    assert.equal(r1.status, 200);
    const seq1 = (JSON.parse(r1.body) as { seq: number }).seq;

    const suspended = await s.client.call<api.ActorResponse>('SuspendActor', { actor_ref: { atespace: 'demo', name: 'actor-003' } });
    assert.ok(suspended.ok);
    assert.equal(suspended.value.actor.status, 'STATUS_SUSPENDED');
    assert.equal(suspended.value.actor.ateom_pod_ip, '');
    assert.ok(Number(suspended.value.actor.version) > Number(actor.version));
    const stale = await get(actor.ateom_pod_ip, 'actor-003');
    assert.equal(stale.status, 421);
    assert.equal(stale.headers['x-ate-assignment-stale'], 'true');

    const back = await resumeOk('actor-003');
    const r2 = await get(back.ateom_pod_ip, 'actor-003');
    assert.equal(r2.status, 200);
    assert.equal((JSON.parse(r2.body) as { seq: number }).seq, seq1 + 1);
  });

  test('move places the actor on another worker; the old one answers 421', async () => {
    const actor = await resumeOk('actor-004');
    const moved = await admin<{ workerIp: string; status: string }>(s.admin, 'POST', '/actors/demo/actor-004/move');
    assert.equal(moved.status, 200);
    assert.equal(moved.body.status, 'RUNNING');
    assert.notEqual(moved.body.workerIp, actor.ateom_pod_ip);
    assert.equal((await get(actor.ateom_pod_ip, 'actor-004')).status, 421);
    assert.equal((await get(moved.body.workerIp, 'actor-004')).status, 200);
    const viaGrpc = await resumeOk('actor-004');
    assert.equal(viaGrpc.ateom_pod_ip, moved.body.workerIp);
    // Moving an actor that is not running is refused.
    const notRunning = await admin(s.admin, 'POST', '/actors/demo/actor-009/move');
    assert.equal(notRunning.status, 409);
  });

  test('50 concurrent resumes of one suspended actor: exactly one placement, the rest ABORTED', async () => {
    await admin(s.admin, 'PUT', '/config', { coldResumeMs: 500 });
    try {
      await admin(s.admin, 'POST', '/stats/reset');
      const results = await Promise.all(Array.from({ length: 50 }, () => s.client.resume('actor-005')));
      const ok = results.filter((r) => r.ok);
      const aborted = results.filter((r) => !r.ok && r.code === status.ABORTED);
      assert.equal(ok.length, 1);
      assert.equal(aborted.length, 49);
      for (const r of aborted) assert.ok(!r.ok && r.details === 'another operation is in progress for this actor');
      const stats = await admin<{ placements: number; rpc: Record<string, Record<string, number>> }>(s.admin, 'GET', '/stats');
      assert.equal(stats.body.placements, 1);
      assert.deepEqual(stats.body.rpc.ResumeActor, { OK: 1, ABORTED: 49 });
    } finally {
      await admin(s.admin, 'PUT', '/config', { coldResumeMs: 10 });
    }
  });

  test('NOT_FOUND and INVALID_ARGUMENT', async () => {
    const rpcBefore = (await admin<{ rpc: Record<string, Record<string, number>> }>(s.admin, 'GET', '/stats')).body.rpc;
    const missing = await s.client.resume('nobody');
    assert.ok(!missing.ok && missing.code === status.NOT_FOUND);
    const get = await s.client.call('GetActor', { actor_ref: { atespace: 'demo', name: 'nobody' } });
    assert.ok(!get.ok && get.code === status.NOT_FOUND);
    for (const ref of [{ atespace: 'demo', name: '' }, { atespace: '', name: 'actor-001' }, { atespace: 'demo', name: 'Bad_Name' }, { atespace: 'a.b', name: 'x' }]) {
      const r = await s.client.call('ResumeActor', { actor_ref: ref });
      assert.ok(!r.ok && r.code === status.INVALID_ARGUMENT, JSON.stringify(ref));
    }
    const noRef = await s.client.call('SuspendActor', {});
    assert.ok(!noRef.ok && noRef.code === status.INVALID_ARGUMENT);
    const stats = await admin<{ rpc: Record<string, Record<string, number>> }>(s.admin, 'GET', '/stats');
    const delta = (rpc: string, code: string): number => (stats.body.rpc[rpc]?.[code] ?? 0) - (rpcBefore[rpc]?.[code] ?? 0);
    assert.deepEqual([delta('ResumeActor', 'INVALID_ARGUMENT'), delta('ResumeActor', 'NOT_FOUND'), delta('GetActor', 'NOT_FOUND'), delta('SuspendActor', 'INVALID_ARGUMENT')], [4, 1, 1, 1]);
  });

  test('admin outage: every Control call answers UNAVAILABLE until it ends; workers keep serving', async () => {
    const actor = await resumeOk('actor-004');
    assert.equal((await admin(s.admin, 'POST', '/outage', { ms: 600_000 })).status, 200);
    try {
      const r = await s.client.resume('actor-004');
      assert.ok(!r.ok && r.code === status.UNAVAILABLE, 'ResumeActor during the outage');
      const g = await s.client.call('GetActor', { actor_ref: { atespace: 'demo', name: 'actor-004' } });
      assert.ok(!g.ok && g.code === status.UNAVAILABLE, 'GetActor during the outage');
      assert.equal((await get(actor.ateom_pod_ip, 'actor-004')).status, 200, 'the data plane is not affected');
      const stats = await admin<{ rpc: Record<string, Record<string, number>> }>(s.admin, 'GET', '/stats');
      assert.ok((stats.body.rpc.ResumeActor?.UNAVAILABLE ?? 0) >= 1);
      assert.equal((await admin(s.admin, 'POST', '/outage', { ms: -1 })).status, 400);
    } finally {
      assert.equal((await admin(s.admin, 'DELETE', '/outage')).status, 200);
    }
    assert.ok((await s.client.resume('actor-004')).ok, 'answers again once the outage ends');
  });

  test('CreateActor, ListActors (paged), ListWorkers, DeleteActor', async () => {
    const created = await s.client.call<api.ActorResponse>('CreateActor', {
      actor_ref: { atespace: 'other', name: 'fresh' },
      actor_template_namespace: 'tpl-ns',
      actor_template_name: 'tpl',
    });
    assert.ok(created.ok);
    assert.equal(created.value.actor.status, 'STATUS_SUSPENDED');
    assert.equal(created.value.actor.actor_template_name, 'tpl');
    const dup = await s.client.call('CreateActor', { actor_ref: { atespace: 'other', name: 'fresh' } });
    assert.ok(!dup.ok && dup.code === status.ALREADY_EXISTS);

    const page1 = await s.client.call<api.ListActorsResponse>('ListActors', { atespace: 'demo', page_size: 4 });
    assert.ok(page1.ok);
    assert.deepEqual(page1.value.actors.map((a) => a.atespace), ['demo', 'demo', 'demo', 'demo']);
    assert.equal(page1.value.next_page_token, '4');
    const rest = await s.client.call<api.ListActorsResponse>('ListActors', { atespace: 'demo', page_token: '4' });
    assert.ok(rest.ok);
    assert.equal(rest.value.actors.length, 6);
    assert.equal(rest.value.next_page_token, '');
    const other = await s.client.call<api.ListActorsResponse>('ListActors', { atespace: 'other' });
    assert.ok(other.ok);
    assert.equal(other.value.actors.length, 1);

    const workers = await s.client.call<api.ListWorkersResponse>('ListWorkers', {});
    assert.ok(workers.ok);
    assert.deepEqual(workers.value.workers.map((w) => w.ip).sort(), [...s.workers].sort());

    const resumed = await s.client.resume('fresh', 'other');
    assert.ok(resumed.ok);
    const ip = resumed.value.actor.ateom_pod_ip;
    const del = await s.client.call('DeleteActor', { actor_ref: { atespace: 'other', name: 'fresh' } });
    assert.ok(del.ok);
    assert.equal((await workerRequest({ ip, port: s.port, host: HOST('fresh', 'other') })).status, 421);
    const gone = await s.client.call('GetActor', { actor_ref: { atespace: 'other', name: 'fresh' } });
    assert.ok(!gone.ok && gone.code === status.NOT_FOUND);
  });

  test('a forged stale header never leaves the worker', async () => {
    const actor = await resumeOk('actor-001');
    const res = await get(actor.ateom_pod_ip, 'actor-001', { headers: { 'x-demo-forge-stale': '1' } });
    assert.equal(res.status, 421, 'the app answered 421');
    assert.equal(res.headers['x-ate-assignment-stale'], undefined);
  });

  test('request ids are recorded per actor and a second delivery of one id counts as a duplicate', async () => {
    const actor = await resumeOk('actor-006');
    await admin(s.admin, 'POST', '/stats/reset');
    for (const id of ['a-1', 'a-2', 'a-1']) {
      assert.equal((await get(actor.ateom_pod_ip, 'actor-006', { headers: { 'x-request-id': id } })).status, 200);
    }
    await get(actor.ateom_pod_ip, 'actor-006');
    await get(s.workers.find((w) => w !== actor.ateom_pod_ip)!, 'actor-006', { headers: { 'x-request-id': 'a-3' } });
    const view = await admin<{ requestIds: string[]; status: string; workerIp: string }>(s.admin, 'GET', '/actors/demo/actor-006');
    assert.deepEqual(view.body.requestIds, ['a-1', 'a-2']);
    assert.equal(view.body.workerIp, actor.ateom_pod_ip);
    const stats = await admin<{ deliveries: { total: number; duplicates: number }; workers: Record<string, { requests: number; misdirected: number; actors: string[] }> }>(
      s.admin,
      'GET',
      '/stats',
    );
    assert.deepEqual(stats.body.deliveries, { total: 4, duplicates: 1 });
    assert.equal(stats.body.workers[actor.ateom_pod_ip]?.requests, 4);
    assert.deepEqual(stats.body.workers[actor.ateom_pod_ip]?.actors, ['demo/actor-006']);
    const misdirected = Object.values(stats.body.workers).reduce((n, w) => n + w.misdirected, 0);
    assert.equal(misdirected, 1);

    // The reset answers the fresh /stats; /metrics keeps the lifetime counts.
    const reset = await admin<{ deliveries: { total: number; duplicates: number }; rpc: Record<string, unknown>; placements: number }>(s.admin, 'POST', '/stats/reset');
    assert.equal(reset.status, 200);
    assert.deepEqual(reset.body.deliveries, { total: 0, duplicates: 0 });
    assert.deepEqual(reset.body.rpc, {}, 'no RPC since the reset');
    assert.equal(reset.body.placements, 0);
    const metrics = await fetch(`http://${s.admin}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    const deliveries = /^actor_edge_apiserver_stub_deliveries_total (\d+)$/m.exec(text);
    assert.ok(deliveries && Number(deliveries[1]) >= 4, 'lifetime deliveries');
    const duplicates = /^actor_edge_apiserver_stub_delivery_duplicates_total (\d+)$/m.exec(text);
    assert.ok(duplicates && Number(duplicates[1]) >= 1, 'lifetime duplicates');
    assert.match(text, /^actor_edge_apiserver_stub_rpc_total\{method="ResumeActor",code="OK"\} [1-9]\d*$/m);
    assert.match(text, /^actor_edge_apiserver_stub_actors\{status="RUNNING"\} [1-9]\d*$/m);
    assert.match(text, /^actor_edge_apiserver_stub_workers_live 12$/m);
    assert.doesNotMatch(text, /actor-006/, 'no actor names in labels');
  });

  test('/ready answers LIVE once the workers are attached', async () => {
    const ready = await fetch(`http://${s.admin}/ready`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), 'LIVE\n');
    assert.equal((await fetch(`http://${s.admin}/live`)).status, 200);
  });

  test('the control listener serves gRPC health checks: SERVING, NOT_SERVING during an admin-set outage', async () => {
    const health = createHealthClient(s.stub.addresses.grpc);
    try {
      assert.deepEqual(await checkHealth(health, 'ateapi.Control', 2000).answer, { kind: 'serving' });
      assert.deepEqual(await checkHealth(health, '', 2000).answer, { kind: 'serving' });
      assert.deepEqual(await checkHealth(health, 'atestub.Nope', 2000).answer, { kind: 'unknown-service' });
      assert.equal((await admin(s.admin, 'POST', '/outage', { ms: 60_000 })).status, 200);
      assert.deepEqual(await checkHealth(health, 'ateapi.Control', 2000).answer, { kind: 'not-serving', status: 'NOT_SERVING' });
      assert.equal((await admin(s.admin, 'DELETE', '/outage')).status, 200);
      assert.deepEqual(await checkHealth(health, 'ateapi.Control', 2000).answer, { kind: 'serving' });
    } finally {
      health.close();
    }
  });

  test('GET / lists the admin endpoints; an unknown route answers {error, code}', async () => {
    const index = await admin<{ component: string; endpoints: { method: string; path: string }[] }>(s.admin, 'GET', '/');
    assert.equal(index.body.component, 'apiserver-stub');
    const listed = index.body.endpoints.map((e) => `${e.method} ${e.path}`);
    for (const e of ['GET /ready', 'GET /stats', 'GET /actors', 'POST /actors/:atespace/:name/move', 'POST /outage', 'DELETE /churn']) assert.ok(listed.includes(e), e);
    const unknown = await admin<Record<string, unknown>>(s.admin, 'GET', '/config_dump');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'ROUTE_NOT_FOUND');
    assert.equal(typeof unknown.body.error, 'string');
  });

  test('demo app knobs: bytes, delay_ms, sse', async () => {
    const actor = await resumeOk('actor-007');
    const big = await get(actor.ateom_pod_ip, 'actor-007', { path: '/x?bytes=5000' });
    assert.equal(big.status, 200);
    assert.equal(Buffer.byteLength(big.body), 5000);
    assert.equal((JSON.parse(big.body) as { actor: string }).actor, 'actor-007');
    const slow = await get(actor.ateom_pod_ip, 'actor-007', { path: '/x?delay_ms=30' });
    assert.equal(slow.status, 200);
    const events = await get(actor.ateom_pod_ip, 'actor-007', { path: '/x?sse=3' });
    assert.equal(events.status, 200);
    assert.match(String(events.headers['content-type']), /text\/event-stream/);
    const data = events.body.split('\n').filter((l) => l.startsWith('data: '));
    assert.equal(data.length, 3);
    assert.equal((JSON.parse(data[2]!.slice(6)) as { actor: string }).actor, 'actor-007');
  });

  test('SSE events are flushed as written', async () => {
    const actor = await resumeOk('actor-007');
    const firstEvent = await new Promise<string>((resolve, reject) => {
      const req = http.request({ host: actor.ateom_pod_ip, port: s.port, path: '/?sse=50', headers: { host: HOST('actor-007') }, agent: false }, (res) => {
        res.setEncoding('utf8');
        res.once('data', (chunk: string) => {
          resolve(chunk);
          req.destroy();
        });
      });
      req.on('error', reject);
      req.end();
    });
    // 50 events take 4.9 s in total; the first arrives on its own, before the next is written.
    assert.match(firstEvent, /^id: 0\n/);
    assert.equal(firstEvent.match(/^id: /gm)?.length, 1);
  });

  test('stopping a worker refuses connections, drops open ones and suspends its actors; start reopens it', async () => {
    const actor = await resumeOk('actor-008');
    const ip = actor.ateom_pod_ip;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await get(ip, 'actor-008', { agent })).status, 200);
      const sockets = Object.values(agent.freeSockets).flat();
      assert.equal(sockets.length, 1, 'one idle keep-alive socket');
      const closed = new Promise<void>((resolve) => sockets[0]!.once('close', () => resolve()));

      const stopped = await admin<{ alive: boolean; listening: boolean; actors: string[] }>(s.admin, 'POST', `/workers/${ip}/stop`);
      assert.equal(stopped.status, 200);
      assert.equal(stopped.body.alive, false);
      assert.deepEqual(stopped.body.actors, []);
      await closed;
      await assert.rejects(get(ip, 'actor-008'), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
      const view = await admin<{ status: string; workerIp: string | null }>(s.admin, 'GET', '/actors/demo/actor-008');
      assert.equal(view.body.status, 'SUSPENDED');
      assert.equal(view.body.workerIp, null);
      const stats = await admin<{ workers: Record<string, { alive: boolean }> }>(s.admin, 'GET', '/stats');
      assert.equal(stats.body.workers[ip]?.alive, false);
      // A stopped worker gets no placements.
      const again = await resumeOk('actor-008');
      assert.notEqual(again.ateom_pod_ip, ip);
    } finally {
      agent.destroy();
    }
    const started = await admin<{ alive: boolean }>(s.admin, 'POST', `/workers/${ip}/start`);
    assert.equal(started.status, 200);
    assert.equal(started.body.alive, true);
    assert.equal((await get(ip, 'actor-008')).status, 421);
  });

  test('admin API: bad input → 400, unknown actor or worker → 404', async () => {
    assert.equal((await admin(s.admin, 'GET', '/healthz')).status, 404, 'health is /ready now');
    assert.equal((await admin(s.admin, 'PUT', '/config', { coldResumeMs: -1 })).status, 400);
    assert.equal((await admin(s.admin, 'PUT', '/config', { bogus: 1 })).status, 400);
    assert.equal((await admin(s.admin, 'PUT', '/config', '{not json')).status, 400);
    assert.equal((await admin(s.admin, 'POST', '/churn', { suspendPerSec: 'x' })).status, 400);
    assert.equal((await admin(s.admin, 'POST', '/churn', {})).status, 400);
    const bad = await admin<{ error: string }>(s.admin, 'GET', '/actors/demo/Bad_Name');
    assert.equal(bad.status, 400);
    assert.equal(typeof bad.body.error, 'string');
    assert.equal((await admin(s.admin, 'GET', '/actors/demo/nobody')).status, 404);
    assert.equal((await admin(s.admin, 'POST', '/actors/demo/nobody/suspend')).status, 404);
    assert.equal((await admin(s.admin, 'POST', '/workers/10.9.9.9/stop')).status, 404);
    assert.equal((await admin(s.admin, 'POST', '/workers/not-an-ip/stop')).status, 400);
    const cfg = await admin<{ resolveLatencyMs: number }>(s.admin, 'PUT', '/config', { resolveLatencyMs: 3 });
    assert.equal(cfg.body.resolveLatencyMs, 3);
    await admin(s.admin, 'PUT', '/config', { resolveLatencyMs: 0 });
    const list = await admin<{ actors: { name: string }[] }>(s.admin, 'GET', '/actors?atespace=demo');
    assert.equal(list.body.actors.length, 10);
  });
});

describe('apiserver-stub capacity', () => {
  let s: TestStub;
  before(async () => {
    s = await startTestStub({ workers: 2, actors: 3 });
  });
  after(async () => {
    await s.close();
  });

  test('no free worker → RESOURCE_EXHAUSTED "no free workers available", actor stays SUSPENDED', async () => {
    assert.ok((await s.client.resume('actor-000')).ok);
    assert.ok((await s.client.resume('actor-001')).ok);
    const full = await s.client.resume('actor-002');
    assert.ok(!full.ok);
    assert.equal(full.code, status.RESOURCE_EXHAUSTED);
    assert.equal(full.details, 'no free workers available');
    const view = await admin<{ status: string }>(s.admin, 'GET', '/actors/demo/actor-002');
    assert.equal(view.body.status, 'SUSPENDED');
    // Freeing a slot lets it in.
    assert.ok((await s.client.call('SuspendActor', { actor_ref: { atespace: 'demo', name: 'actor-000' } })).ok);
    const now = await eventually(async () => {
      const r = await s.client.resume('actor-002');
      return r.ok ? r.value : undefined;
    }, 5000, 'placement');
    assert.equal(now.actor.status, 'STATUS_RUNNING');
  });
});

describe('apiserver-stub --auto-create', () => {
  let s: TestStub;
  before(async () => {
    s = await startTestStub({ workers: 1, actors: 0, autoCreate: true });
  });
  after(async () => {
    await s.close();
  });

  test('ResumeActor creates an unknown, validly named actor and runs it', async () => {
    const r = await s.client.resume('brand-new', 'team-a');
    assert.ok(r.ok);
    assert.equal(r.value.actor.status, 'STATUS_RUNNING');
    const res = await workerRequest({ ip: r.value.actor.ateom_pod_ip, port: s.port, host: HOST('brand-new', 'team-a') });
    assert.equal(res.status, 200);
    const bad = await s.client.resume('Not_Valid', 'team-a');
    assert.ok(!bad.ok && bad.code === status.INVALID_ARGUMENT);
  });
});
