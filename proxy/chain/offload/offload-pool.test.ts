import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestContext } from '../../api/filter.js';
import { OffloadPool } from './offload-pool.js';
import { OffloadStats } from './offload-stats.js';
import { offload, type FixtureInput } from './testing/offload-fixture.js';
import { waitFor } from '../../../lib/testing/wait.js';

const FIXTURE = new URL('./testing/offload-fixture.js', import.meta.url).href;

/** A request as the pool sees it: its filter signal. */
function request(): { ctx: RequestContext; abort(): void } {
  const controller = new AbortController();
  return { ctx: { signal: controller.signal } as RequestContext, abort: () => controller.abort(new Error('client closed the request')) };
}

async function withPool(workers: number, backlog: number, body: (pool: OffloadPool, run: ReturnType<OffloadPool['offloader']>) => Promise<void>): Promise<void> {
  const pool = await OffloadPool.start({ workers, backlog });
  try {
    await body(pool, pool.offloader(FIXTURE, offload as never));
  } finally {
    await pool.close();
  }
}

test('with 0 workers a call runs inline, on the main thread, and is counted inline', async () => {
  await withPool(0, 1, async (pool, run) => {
    const stats = new OffloadStats(pool); // counts from here
    const decision = await run<FixtureInput>(request().ctx, { op: 'where' });
    assert.deepEqual(decision, { kind: 'continue', setHeaders: { 'x-where': 'main' }, removeHeaders: ['x-remove-me'] });
    assert.equal(pool.workers, 0);
    assert.deepEqual(stats.snapshot(), { workers: { configured: 0, running: 0 }, backlog: { waiting: 0, limit: 1 }, calls: { pool: 0, inline: 1 }, stale: 0, errors: 0 });
  });
});

test('with workers a call runs on a worker thread, its body moved by transfer', async () => {
  await withPool(2, 4, async (pool, run) => {
    assert.deepEqual(await run<FixtureInput>(request().ctx, { op: 'where' }), { kind: 'continue', setHeaders: { 'x-where': 'worker' }, removeHeaders: ['x-remove-me'] });
    const body = new Uint8Array([104, 105]);
    const decision = await run<FixtureInput>(request().ctx, { op: 'reply', body }, { transfer: [body.buffer] });
    assert.equal(body.byteLength, 0, 'the transferred buffer is detached');
    assert.equal(decision.kind, 'reply');
    if (decision.kind === 'reply') assert.deepEqual([decision.reply.status, Buffer.from(decision.reply.body as Uint8Array).toString()], [418, 'hi']);
    assert.deepEqual(pool.tallies.calls, { pool: 2, inline: 0 });
    assert.equal(pool.workers, 2);
  });
});

test('a call that finds the queue full runs inline and is counted; the queued ones still run in the pool', async () => {
  await withPool(1, 1, async (pool, run) => {
    await run<FixtureInput>(request().ctx, { op: 'where' }); // the thread is up
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const busy = run<FixtureInput>(request().ctx, { op: 'block', gate }); // on the one thread
    const queued = run<FixtureInput>(request().ctx, { op: 'block', gate }); // the one place in the queue
    await waitFor(() => pool.backlog === 1, 5000, 'the second call queued');
    const overflow = await run<FixtureInput>(request().ctx, { op: 'where' });
    assert.deepEqual(overflow.kind === 'continue' && overflow.setHeaders, { 'x-where': 'main' });
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    for (const d of await Promise.all([busy, queued])) assert.deepEqual(d.kind === 'continue' && d.setHeaders, { 'x-where': 'worker' });
    assert.deepEqual(pool.tallies.calls, { pool: 3, inline: 1 });
    assert.equal(pool.tallies.stale, 0);
  });
});

test('a request that stops waiting (client gone, filter timed out) drops its result as stale; the pool serves the next', async () => {
  await withPool(1, 4, async (pool, run) => {
    const r = request();
    const pending = run<FixtureInput>(r.ctx, { op: 'sleep', ms: 60_000 });
    await waitFor(() => pool.backlog === 0 && pool.workers === 1, 5000, 'the call running');
    r.abort(); // the running thread is terminated: the sleep does not hold it
    await assert.rejects(pending, /no longer waits/);
    assert.equal(pool.tallies.stale, 1);
    assert.equal(pool.tallies.errors, 0);
    const next = await run<FixtureInput>(request().ctx, { op: 'where' });
    assert.equal(next.kind, 'continue');
  });
});

test('only the latest call of a request applies: an earlier one is stale', async () => {
  await withPool(0, 1, async (pool, run) => {
    const { ctx } = request();
    const first = run<FixtureInput>(ctx, { op: 'where' });
    const second = run<FixtureInput>(ctx, { op: 'x' });
    await assert.rejects(first, /later offloaded call/);
    assert.deepEqual(await second, { kind: 'continue', setHeaders: { 'x-echo': 'x:0' } });
    assert.equal(pool.tallies.stale, 1);
  });
});

test('a call that throws rejects with its error, counted; a worker thread that dies fails its call alone and is replaced', async () => {
  await withPool(1, 4, async (pool, run) => {
    await assert.rejects(run<FixtureInput>(request().ctx, { op: 'throw' }), /fixture threw on worker/);
    await assert.rejects(run<FixtureInput>(request().ctx, { op: 'exit' }));
    assert.equal(pool.tallies.errors, 2);
    const next = await run<FixtureInput>(request().ctx, { op: 'where' });
    assert.deepEqual(next.kind === 'continue' && next.setHeaders, { 'x-where': 'worker' });
    assert.equal(pool.workers, 1);
  });
  await withPool(0, 1, async (pool, run) => {
    await assert.rejects(run<FixtureInput>(request().ctx, { op: 'throw' }), /fixture threw on main/);
    assert.equal(pool.tallies.errors, 1);
  });
});
