/**
 * End to end, real stub, extproc and proxy (in the test's process): what `/metrics` says about requests the
 * proxy really served. The request-duration histogram tells a miss, a hit and a re-run apart, and HTTP/1.1 from
 * HTTP/2; a host that names no actor is `cache="none"`. The per-worker counters (and `GET /upstreams`) count
 * every upstream attempt on the worker it went to, a stale answer as that worker's error and the re-run's
 * attempt on the new worker; a WebSocket handshake is an attempt too, and the request is timed when its tunnel
 * closes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { once } from 'node:events';
import { request } from 'undici';
import { metricSum } from '../../lib/testing/scrape.js';
import { waitFor } from '../../lib/testing/wait.js';
import { adminJson, client, hostOf, send, startStack, stubActor, ATESPACE, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { openSocket } from '../testing/ws-client.js';

let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;

describe('request metrics', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, capacity: 4, actors: 8 }, proxyArgs: ['--cache-ttl-ms', '600000', '--cache-refresh-ahead', 'off'] });
    ({ stub, proxy } = stack);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  async function scrape(): Promise<string> {
    const res = await request(`${proxy.admin}/metrics`, { dispatcher: client });
    return res.body.text();
  }

  const timed = (text: string, cache: string, protocol: string): number =>
    metricSum(text, `actor_edge_proxy_request_duration_seconds_count{cache="${cache}",protocol="${protocol}"}`);

  /** One GET over HTTP/2 (prior knowledge) to `actor`; resolves with the status. */
  async function sendH2(actor: string): Promise<number> {
    const session = http2.connect(proxy.ingress);
    try {
      const stream = session.request({ ':method': 'GET', ':path': '/', ':authority': hostOf(actor) });
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      stream.resume();
      await once(stream, 'end');
      return Number(headers[':status']);
    } finally {
      session.close();
    }
  }

  test('the duration histogram by cache outcome and protocol, and the per-worker counters, from served requests', async () => {
    const actor = 'actor-003';
    assert.equal((await send(proxy, actor)).status, 200); // miss
    assert.equal((await send(proxy, actor)).status, 200); // hit
    assert.equal(await sendH2(actor), 200); // hit over HTTP/2
    assert.equal((await send(proxy, 'x', { host: 'not-an-actor.example' })).status, 404);
    const before = await stubActor(stub, actor);
    const oldWorker = `${before.workerIp}:${stub.workerPort}`;
    await adminJson(stub.admin, `/actors/${ATESPACE}/${actor}/move`, 'POST');
    const moved = await send(proxy, actor); // stale from the old worker, re-run, 200 from the new one
    assert.equal(moved.status, 200);
    const newWorker = `${moved.app?.worker}:${stub.workerPort}`;
    assert.notEqual(newWorker, oldWorker);

    const text = await scrape();
    assert.deepEqual(
      [timed(text, 'miss', 'http/1.1'), timed(text, 'hit', 'http/1.1'), timed(text, 'hit', 'h2'), timed(text, 'rerun', 'http/1.1'), timed(text, 'none', 'http/1.1')],
      [1, 1, 1, 1, 1],
    );
    assert.equal(metricSum(text, 'actor_edge_proxy_request_duration_seconds_count'), 5, 'each request timed once');

    // The old worker: the miss, two hits and the stale attempt; the new one: the re-run's attempt.
    assert.equal(metricSum(text, `actor_edge_proxy_worker_requests_total{worker="${oldWorker}"}`), 4);
    assert.equal(metricSum(text, `actor_edge_proxy_worker_errors_total{worker="${oldWorker}",reason="stale"}`), 1);
    assert.equal(metricSum(text, `actor_edge_proxy_worker_requests_total{worker="${newWorker}"}`), 1);
    assert.equal(metricSum(text, `actor_edge_proxy_worker_errors_total{worker="${newWorker}",reason="stale"}`), 0);
    assert.equal(metricSum(text, 'actor_edge_proxy_worker_requests_total'), 5, 'no attempt for the host that names no actor');
    const upstreams = await adminJson<{ workers: { worker: string; requests: number; errors: Record<string, number> }[] }>(proxy.admin, '/upstreams');
    const old = upstreams.workers.find((w) => w.worker === oldWorker);
    assert.deepEqual([old?.requests, old?.errors.stale, old?.errors.connect], [4, 1, 0]);
    assert.equal(upstreams.workers.find((w) => w.worker === newWorker)?.requests, 1);
  });

  test('a WebSocket is an attempt on its worker, and is timed once its tunnel closes', async () => {
    const before = await scrape();
    const socket = await openSocket(proxy.ingress, 'actor-005'); // a miss
    const worker = `${(await socket.echo('hi')).worker}:${stub.workerPort}`;
    const open = await scrape();
    const attempts = (text: string): number => metricSum(text, `actor_edge_proxy_worker_requests_total{worker="${worker}"}`);
    assert.equal(attempts(open), attempts(before) + 1, 'the handshake\'s attempt');
    assert.equal(timed(open, 'miss', 'http/1.1'), timed(before, 'miss', 'http/1.1'), 'not timed while open');
    socket.ws.close();
    await socket.closed;
    await waitFor(async () => timed(await scrape(), 'miss', 'http/1.1') === timed(before, 'miss', 'http/1.1') + 1, 5000, 'the closed tunnel to be timed');
    assert.equal(attempts(await scrape()), attempts(before) + 1);
  });
});
