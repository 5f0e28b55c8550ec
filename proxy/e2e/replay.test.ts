/**
 * End to end, a real proxy in the test's process with a scripted ext_proc that routes each attempt of a request
 * where the test says, to plain node:http workers: the exact replay limit (a body of `--max-replay-body-bytes`
 * bytes is replayed, one byte more is not), a re-run that starts while the client is still sending the body, and
 * the connect-failure and reset rules for a POST (nothing sent → re-run; reset after the request was written →
 * 502, never re-run).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { boundAddress } from '../../lib/address.js';
import { freePort as freeClosedPort } from '../../lib/loopback.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { ERRORS } from '../http/errors.js';
import { client, hostOf, proxyStats, resetStats, send, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { startHeldPost } from '../testing/held-post.js';

const MIB = 1024 * 1024;
const SMALL_LIMIT = 1000;

/** A worker that reads the whole body and answers what it received. */
interface Recorder {
  readonly address: string;
  /** Request ids in the order their headers arrived. */
  readonly arrived: string[];
  /** Request id → the body received, once complete. */
  readonly bodies: Map<string, Buffer[]>;
  close(): Promise<void>;
}

async function startRecorder(): Promise<Recorder> {
  const arrived: string[] = [];
  const bodies = new Map<string, Buffer[]>();
  const server = http.createServer((req, res) => {
    const id = String(req.headers['x-request-id']);
    arrived.push(id);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.set(id, [...(bodies.get(id) ?? []), body]);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ bodyLength: body.length, bodySha256: sha(body) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: boundAddress(server),
    arrived,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const staleAnswer = (res: http.ServerResponse): void => {
  res.writeHead(421, { 'x-ate-assignment-stale': 'true', 'content-type': 'text/plain' });
  res.end('stale');
};

let ep: ScriptedExtProc;
let good: Recorder;
/** Answers stale after reading the whole body. */
let staleAfterBody: Upstream;
/** Answers stale as soon as the request head arrives, without waiting for the body. */
let staleAtOnce: Upstream;
/** Closes the connection as soon as the request head arrives: the request was written, no answer comes. */
let resetter: Upstream;
let closedAddress: string;
let proxy: InProcessTestProxy;
let small: InProcessTestProxy;
/** Request id → the worker each attempt goes to, in order (then `good`). */
const plan = new Map<string, string[]>();

describe('request replay across attempts', () => {
  before(async () => {
    good = await startRecorder();
    staleAfterBody = await startUpstream((_req, res) => staleAnswer(res));
    staleAtOnce = await startUpstream(
      (req, res) => {
        req.resume();
        staleAnswer(res);
      },
      '127.0.0.1',
      { readBody: false },
    );
    resetter = await startUpstream((req) => req.socket.destroy(), '127.0.0.1', { readBody: false });
    closedAddress = `127.0.0.1:${await freeClosedPort()}`;
    ep = await startScriptedExtProc((m) => routeTo(plan.get(m.headers['x-request-id'] ?? '')?.shift() ?? good.address));
    [proxy, small] = await Promise.all([
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] }), // the default replay limit: 1 MiB
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', '--max-replay-body-bytes', String(SMALL_LIMIT)] }),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([proxy, small].map((p) => p?.stop()));
    await ep?.close();
    await Promise.all([good, staleAfterBody, staleAtOnce, resetter].map((u) => u?.close()));
  });

  for (const [name, limit] of [['the default 1 MiB', MIB], [`--max-replay-body-bytes ${SMALL_LIMIT}`, SMALL_LIMIT]] as const) {
    test(`replay limit (${name}): a body of exactly the limit is replayed after a stale answer; one byte more is not`, async () => {
      const p = limit === MIB ? proxy : small;
      await resetStats(p.admin);
      const atLimit = randomBytes(limit);
      const atId = `at-limit-${limit}`;
      plan.set(atId, [staleAfterBody.address, good.address]);
      const replayed = await send(p, 'replay', { method: 'POST', body: atLimit, requestId: atId });
      assert.equal(replayed.status, 200, replayed.text);
      assert.deepEqual(JSON.parse(replayed.text), { bodyLength: limit, bodySha256: sha(atLimit) });
      assert.equal(good.bodies.get(atId)?.length, 1, 'delivered exactly once');

      const over = randomBytes(limit + 1);
      const overId = `over-limit-${limit}`;
      plan.set(overId, [staleAfterBody.address, good.address]);
      const refused = await send(p, 'replay', { method: 'POST', body: over, requestId: overId });
      assert.equal(refused.status, ERRORS.STALE_NOT_REPLAYABLE.status);
      assert.equal(refused.text.trim(), ERRORS.STALE_NOT_REPLAYABLE.text);
      assert.equal(good.arrived.includes(overId), false, 'never sent a second time');
      assert.deepEqual((await proxyStats(p)).reruns, { stale: 1, connect: 0, reset: 0 });
    });
  }

  test('a re-run that starts while the client is still sending the body delivers the whole body once', async () => {
    await resetStats(proxy.admin);
    const id = 'rerun-mid-body';
    plan.set(id, [staleAtOnce.address, good.address]);
    const head = randomBytes(64 * 1024);
    const rest = randomBytes(192 * 1024);
    const post = startHeldPost(proxy.ingress, hostOf('uploader'), id, '/upload');
    try {
      post.write(head);
      // The stale worker answered on the head alone, and the re-run already reached the next worker: all while
      // the client still holds back most of its body.
      await waitFor(() => good.arrived.includes(id), 10_000, 'the re-run to reach the second worker');
      assert.equal(good.bodies.has(id), false, 'the body is not complete yet');
      const a = await post.finish(rest);
      assert.equal(a.status, 200, a.body);
      const whole = Buffer.concat([head, rest]);
      assert.deepEqual(JSON.parse(a.body), { bodyLength: whole.length, bodySha256: sha(whole) });
      assert.equal(good.bodies.get(id)?.length, 1, 'delivered exactly once');
      assert.deepEqual((await proxyStats(proxy)).reruns, { stale: 1, connect: 0, reset: 0 });
    } finally {
      post.abandon();
    }
  });

  test('a POST whose worker refuses the connection is re-run (nothing was sent) and delivered once', async () => {
    await resetStats(proxy.admin);
    const body = randomBytes(4096);
    plan.set('post-connect', [closedAddress, good.address]);
    const a = await send(proxy, 'poster', { method: 'POST', body, requestId: 'post-connect' });
    assert.equal(a.status, 200, a.text);
    assert.equal(JSON.parse(a.text).bodySha256, sha(body));
    assert.equal(good.bodies.get('post-connect')?.length, 1);
    const s = await proxyStats(proxy);
    assert.deepEqual(s.reruns, { stale: 0, connect: 1, reset: 0 });
    assert.equal(s.upstream.connectFailures, 1);
  });

  test('a POST reset after it was written is not re-run: 502, and the next worker never sees it; a GET is re-run', async () => {
    await resetStats(proxy.admin);
    plan.set('post-reset', [resetter.address, good.address]);
    const post = await send(proxy, 'poster', { method: 'POST', body: randomBytes(4096), requestId: 'post-reset' });
    assert.equal(post.status, ERRORS.UPSTREAM_RESET_AFTER_SEND.status);
    assert.equal(post.text.trim(), ERRORS.UPSTREAM_RESET_AFTER_SEND.text);
    assert.equal(good.arrived.includes('post-reset'), false);
    assert.equal(resetter.requests.filter((r) => r.headers['x-request-id'] === 'post-reset').length, 1);
    let s = await proxyStats(proxy);
    assert.deepEqual(s.reruns, { stale: 0, connect: 0, reset: 0 });
    assert.equal(s.upstream.resets, 1);
    assert.equal(s.upstream.resetsNotReplayable, 1, 'the 502 is counted as a reset of a request that could not be sent again');

    plan.set('get-reset', [resetter.address, good.address]);
    const get = await send(proxy, 'getter', { requestId: 'get-reset' });
    assert.equal(get.status, 200, get.text);
    assert.deepEqual(good.arrived.filter((id) => id === 'get-reset'), ['get-reset']);
    s = await proxyStats(proxy);
    assert.deepEqual(s.reruns, { stale: 0, connect: 0, reset: 1 });
    assert.equal(s.upstream.resets, 2);
    assert.equal(s.upstream.resetsNotReplayable, 1, 'the GET re-ran');
  });
});
