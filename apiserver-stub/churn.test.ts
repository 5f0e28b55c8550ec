import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { actorHost } from '../lib/testing/actors.js';
import { admin, workerRequest } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

let s: TestStub;
describe('churn', () => {
  before(async () => {
    s = await startTestStub({ workers: 8, actors: 4, coldResumeMs: 5 });
  });
  after(async () => {
    await s.close();
  });

  /** Bindings learned from ResumeActor, as a caching proxy keeps them. */
  const bindings = new Map<string, string>();

  async function resolve(name: string): Promise<string> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const r = await s.client.resume(name);
      if (r.ok) return r.value.actor.ateom_pod_ip;
      if (r.code !== status.ABORTED && r.code !== status.RESOURCE_EXHAUSTED) throw new Error(`resume ${name}: ${r.details}`);
      await new Promise((done) => setTimeout(done, 10));
    }
    throw new Error(`resume ${name}: still busy`);
  }

  /**
   * A client that follows the control plane: it sends to the binding it learned, and only when the worker says the
   * binding is stale (421 + X-Ate-Assignment-Stale) asks the control plane again.
   */
  async function follow(name: string, requestId: string): Promise<{ status: number; stale: number }> {
    let stale = 0;
    for (let attempt = 0; attempt < 20; attempt++) {
      let ip = bindings.get(name);
      if (ip === undefined) bindings.set(name, (ip = await resolve(name)));
      const res = await workerRequest({ ip, port: s.port, host: actorHost(name), headers: { 'x-request-id': requestId } });
      if (res.status === 421 && res.headers['x-ate-assignment-stale'] === 'true') {
        stale++;
        bindings.delete(name);
        continue;
      }
      return { status: res.status, stale };
    }
    return { status: 0, stale };
  }

  test('churn moves and suspends actors while a client following the control plane keeps getting 200s', async () => {
    const started = await admin<{ running: boolean }>(s.admin, 'POST', '/churn', { suspendPerSec: 10, movePerSec: 40 });
    assert.equal(started.status, 200);
    assert.equal(started.body.running, true);
    const names = ['actor-000', 'actor-001', 'actor-002', 'actor-003'];
    let sent = 0;
    let staleSeen = 0;
    const statuses = new Map<number, number>();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const churn = (await admin<{ moves: number; suspends: number }>(s.admin, 'GET', '/churn')).body;
      if ((churn.moves >= 15 && churn.suspends >= 3) || Date.now() > deadline) break;
      const results = await Promise.all(names.map((n) => follow(n, `churn-${sent++}`)));
      for (const r of results) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        staleSeen += r.stale;
      }
    }
    const stopped = await admin<{ running: boolean; moves: number; suspends: number }>(s.admin, 'DELETE', '/churn');
    assert.equal(stopped.body.running, false);
    // Churn runs on its own timer, so the counts are "at least what the loop waited for", not exact.
    assert.ok(stopped.body.moves >= 15, `moves ${stopped.body.moves}`);
    assert.ok(stopped.body.suspends >= 3, `suspends ${stopped.body.suspends}`);
    assert.deepEqual([...statuses.keys()], [200], `statuses ${JSON.stringify([...statuses])}`);
    assert.ok(staleSeen > 0, 'churn made some bindings stale');
    const stats = await admin<{ deliveries: { total: number; duplicates: number } }>(s.admin, 'GET', '/stats');
    assert.equal(stats.body.deliveries.total, sent);
    assert.equal(stats.body.deliveries.duplicates, 0);
  });
});
