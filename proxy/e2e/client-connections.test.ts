/**
 * End to end, a real proxy in the test's process: what one client connection can make the proxy do. Pipelined
 * requests go upstream one at a time and in order; every one of them is finished (499, logged) when the client
 * leaves, and its upstream request is aborted; a worker pool never opens more than `--upstream-max-connections`
 * connections and answers 503 `PROXY_ERR_UPSTREAM_OVERFLOW` at once beyond `--upstream-max-pending` queued requests.
 * Needs processes: one test ends with SIGTERM and the exit code (that one proxy runs as its own process).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { accessLines, edgeStats, startEdgeStack } from '../testing/edge-harness.js';
import { RawConnection, rawRequest } from '../testing/raw-client.js';

const HOST = actorHost('pipeliner');

/** A connection whose first request taught the proxy the binding: later requests for HOST are cache hits. */
async function warmConnection(ingress: string): Promise<RawConnection> {
  const conn = await RawConnection.open(ingress);
  conn.write(rawRequest('GET', '/warm', HOST));
  assert.equal((await conn.nextResponse()).status, 200);
  return conn;
}

test('pipelined requests go upstream one at a time, in order, and are answered in order', async () => {
  const stack = await startEdgeStack(['--access-log', 'off']);
  try {
    const count = 50;
    const conn = await RawConnection.open(stack.ingress);
    conn.write(Array.from({ length: count }, (_, i) => rawRequest('GET', `/p?i=${i}`, HOST)).join(''));
    const answers = await Promise.all(Array.from({ length: count }, () => conn.nextResponse()));
    conn.destroy();
    assert.deepEqual(answers.map((a) => a.status), Array(count).fill(200));
    assert.deepEqual(stack.upstream.arrivals, Array.from({ length: count }, (_, i) => `/p?i=${i}`));
    assert.equal(stack.upstream.maxActive, 1, 'one request of the pipeline upstream at a time');
    assert.equal(stack.upstream.maxConnections, 1, 'one upstream connection for one client connection');
  } finally {
    await stack.close();
  }
});

test('the client leaves a pipeline: every request ends once (499, logged), upstream requests are aborted, SIGTERM does not wait', async () => {
  const stack = await startEdgeStack(['--drain-timeout-ms', '60000'], 'process');
  try {
    (await warmConnection(stack.ingress)).destroy();
    await waitFor(async () => (await edgeStats(stack)).requests.total === 1, 5000, 'the warm-up request to be finished');
    const conn = await RawConnection.open(stack.ingress);
    conn.write(
      rawRequest('GET', '/hold?first', HOST, { 'x-request-id': 'pipe-first' }) +
        rawRequest('GET', '/big?bytes=8000000', HOST, { 'x-request-id': 'pipe-second' }),
    );
    await waitFor(() => stack.upstream.arrivals.length >= 2, 5000, 'the first request to reach the upstream');
    conn.destroy();

    await waitFor(async () => (await edgeStats(stack)).requests.total === 3, 5000, 'both pipelined requests to be finished');
    const s = await edgeStats(stack);
    assert.deepEqual(Object.values(s.reruns), [0, 0, 0], 'a client leaving re-runs nothing');
    assert.ok(Object.values(s.cache.evictions).every((n) => n === 0), 'a client leaving evicts nothing');
    const ids = ['pipe-first', 'pipe-second'];
    // Log lines come through the process's stdout, a moment after the counters.
    await waitFor(() => ids.every((id) => accessLines(stack).some((l) => l.requestId === id)), 5000, 'both access-log lines');
    const lines = accessLines(stack);
    for (const id of ids) {
      const mine = lines.filter((l) => l.requestId === id);
      assert.equal(mine.length, 1, `${id}: one access-log line`);
      assert.equal(mine[0]?.status, 499, id);
      assert.equal(mine[0]?.error, 'PROXY_ERR_DOWNSTREAM_CLOSED', id);
    }
    await waitFor(() => stack.upstream.openConnections === 0 && stack.upstream.active === 0, 5000, 'the upstream connections to be released');
    assert.deepEqual(stack.upstream.arrivals, ['/warm', '/hold?first'], 'the second request never went upstream');

    stack.proxy.component.child.kill('SIGTERM');
    assert.equal(await stack.proxy.component.exited, 0);
    assert.ok(!stack.proxy.logs().some((l) => l.msg === 'drain timeout: closing remaining connections'), 'the drain waited for no one');
  } finally {
    await stack.close();
  }
});

test('a worker pool caps its connections and answers 503 UPSTREAM_OVERFLOW beyond its queue, without evicting or re-running', async () => {
  const stack = await startEdgeStack(['--upstream-max-connections', '2', '--upstream-max-pending', '1']);
  const open: RawConnection[] = [];
  try {
    const warm = await warmConnection(stack.ingress);
    open.push(warm);
    const streams = stack.extproc.streams;

    const held = [];
    for (let i = 0; i < 3; i++) {
      const c = await RawConnection.open(stack.ingress);
      open.push(c);
      c.write(rawRequest('GET', `/hold?${i}`, HOST));
      held.push(c.nextResponse());
      // Two reach the worker; the third waits in the pool's queue.
      if (i < 2) await waitFor(() => stack.upstream.active === i + 1, 5000, `held request ${i} upstream`);
    }
    const over = await RawConnection.open(stack.ingress);
    open.push(over);
    over.write(rawRequest('GET', '/one-too-many', HOST, { 'x-request-id': 'overflow' }));
    const refused = await over.nextResponse();
    assert.equal(refused.status, 503, 'answered while the worker still holds every connection');
    assert.equal(stack.upstream.active, 2);

    stack.upstream.release();
    await waitFor(() => stack.upstream.arrivals.includes('/hold?2'), 5000, 'the queued request to reach the worker');
    stack.upstream.release();
    for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);
    assert.equal(stack.upstream.maxConnections, 2);
    assert.ok(!stack.upstream.arrivals.includes('/one-too-many'));

    warm.write(rawRequest('GET', '/after', HOST));
    assert.equal((await warm.nextResponse()).status, 200);
    assert.equal(stack.extproc.streams, streams, 'the binding was not evicted: still a cache hit');
    const s = await edgeStats(stack);
    assert.deepEqual(Object.values(s.reruns), [0, 0, 0]);
    assert.ok(Object.values(s.cache.evictions).every((n) => n === 0));
    await waitFor(() => accessLines(stack).some((l) => l.requestId === 'overflow'), 5000, 'the access-log line');
    const line = accessLines(stack).find((l) => l.requestId === 'overflow');
    assert.equal(line?.error, 'PROXY_ERR_UPSTREAM_OVERFLOW');
    assert.equal(line?.attempts, 1);
  } finally {
    for (const c of open) c.destroy();
    await stack.close();
  }
});

test('a client leaving while its request waits in a worker pool queue ends it at once; it never reaches the worker', async () => {
  const stack = await startEdgeStack(['--upstream-max-connections', '1', '--upstream-max-pending', '4']);
  const open: RawConnection[] = [];
  try {
    const first = await warmConnection(stack.ingress);
    open.push(first);
    first.write(rawRequest('GET', '/hold?first', HOST));
    const firstAnswer = first.nextResponse();
    firstAnswer.catch(() => undefined); // awaited below; a failure before that must not surface as unhandled
    await waitFor(() => stack.upstream.active === 1, 5000, 'the first request upstream');

    const queued = await RawConnection.open(stack.ingress);
    queued.write(rawRequest('GET', '/queued', HOST, { 'x-request-id': 'left-in-queue' }));
    // A cache hit goes from the cache to the pool in one synchronous step: once it is counted, it is queued.
    await waitFor(async () => (await edgeStats(stack)).cache.hits === 2, 5000, 'the second request to be queued in the pool');
    queued.destroy();
    await waitFor(() => accessLines(stack).some((l) => l.requestId === 'left-in-queue'), 5000, 'the queued request to end');
    const line = accessLines(stack).find((l) => l.requestId === 'left-in-queue');
    assert.equal(line?.status, 499);
    assert.equal(stack.upstream.active, 1, 'ended while the worker still held the only connection');

    stack.upstream.release();
    assert.equal((await firstAnswer).status, 200);
    first.write(rawRequest('GET', '/next', HOST));
    assert.equal((await first.nextResponse()).status, 200);
    assert.deepEqual(stack.upstream.arrivals, ['/warm', '/hold?first', '/next']);
  } finally {
    for (const c of open) c.destroy();
    await stack.close();
  }
});
