/**
 * The bound on misses in flight to ext_proc (`--extproc-max-streams`), end to end in one process with a scripted
 * ext_proc that holds its answers until the test lets them go: a storm of cold actors opens only that many streams
 * at once, the rest wait their turn and are all answered; past the queue's bound or its wait, 503 with Retry-After.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { getJson, routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

const QUEUE_TEXT = 'too many requests waiting for external processing: retry later\n';

let ep: ScriptedExtProc;
let up: Upstream;
/** Request-headers messages the ext_proc holds now (their streams are waiting for an answer), and the most at once. */
let pending = 0;
let maxPending = 0;
let holding = true;
const held: (() => void)[] = [];

describe('the bound on misses in flight to ext_proc', () => {
  before(async () => {
    up = await startUpstream((_req, res) => res.end('ok'));
    ep = await startScriptedExtProc(async () => {
      pending++;
      maxPending = Math.max(maxPending, pending);
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      pending--;
      return routeTo(up.address);
    });
  });

  after(async () => {
    await ep.close();
    await up.close();
  });

  function letGo(): void {
    holding = false;
    for (const resolve of held.splice(0)) resolve();
  }

  interface QueueBlock {
    readonly maxStreams: number;
    readonly maxWaiting: number;
    readonly inFlight: number;
    readonly waiting: number;
    readonly queued: number;
  }

  async function overload(proxy: InProcessTestProxy): Promise<{ extprocQueue: QueueBlock; shed: Record<string, number> }> {
    return (await getJson(`${proxy.admin}/stats`)).overload as { extprocQueue: QueueBlock; shed: Record<string, number> };
  }

  async function get(proxy: InProcessTestProxy, actor: string): Promise<{ status: number; retryAfter: unknown; text: string }> {
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost(actor) } });
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], text: await res.body.text() };
  }

  async function proxyWith(args: readonly string[]): Promise<InProcessTestProxy> {
    // A long re-run budget: the queue's wait is bounded by it too, and this test decides when the waits end.
    return startTestProxy({ mode: 'in-process', extproc: ep.address, args: ['--access-log', 'off', '--rerun-budget-ms', '600000', ...args] });
  }

  test('--extproc-max-streams 2: 20 cold actors at once open 2 streams, 18 wait in the queue, and all 20 are answered', async () => {
    const proxy = await proxyWith(['--extproc-max-streams', '2', '--extproc-queue-timeout-ms', '600000']);
    try {
      holding = true;
      maxPending = 0;
      const streamsBefore = ep.streams;
      const answers = Array.from({ length: 20 }, (_, i) => get(proxy, `storm-${i}`));
      await waitFor(async () => (await overload(proxy)).extprocQueue.waiting === 18, 10_000, '18 misses queued');
      const q = (await overload(proxy)).extprocQueue;
      assert.deepEqual([q.maxStreams, q.maxWaiting, q.inFlight, q.waiting, q.queued], [2, 1024, 2, 18, 18]);
      assert.equal(pending, 2, 'ext_proc holds two request-headers messages');
      assert.equal(ep.streams - streamsBefore, 2, 'two streams opened, no more');
      letGo();
      for (const a of await Promise.all(answers)) assert.deepEqual([a.status, a.text], [200, 'ok']);
      assert.equal(maxPending, 2, 'never more than two misses at ext_proc at once');
      assert.equal(ep.streams - streamsBefore, 20, 'one stream per cold actor');
      const after = await overload(proxy);
      assert.deepEqual([after.extprocQueue.inFlight, after.extprocQueue.waiting, after.extprocQueue.queued], [0, 0, 18]);
      assert.deepEqual([after.shed.extprocQueueTimeout, after.shed.extprocQueueFull], [0, 0]);
    } finally {
      letGo();
      await proxy.stop();
    }
  });

  test('the queue is bounded: one more miss is answered 503 at once; a miss that waits past --extproc-queue-timeout-ms gets 503', async () => {
    const full = await proxyWith(['--extproc-max-streams', '1', '--extproc-queue-max-waiting', '4', '--extproc-queue-timeout-ms', '600000']);
    const short = await proxyWith(['--extproc-max-streams', '1', '--extproc-queue-timeout-ms', '50']);
    try {
      holding = true;
      const first = get(full, 'full-0');
      const queued = [1, 2, 3, 4].map((i) => get(full, `full-${i}`));
      await waitFor(async () => (await overload(full)).extprocQueue.waiting === 4, 10_000, 'four misses queued');
      const over = await get(full, 'full-5');
      assert.deepEqual([over.status, over.retryAfter, over.text], [503, '1', QUEUE_TEXT]);
      assert.equal((await overload(full)).shed.extprocQueueFull, 1);

      const holder = get(short, 'short-0');
      await waitFor(() => pending === 2, 10_000, 'the second proxy\'s miss at ext_proc');
      const late = await get(short, 'short-1');
      assert.deepEqual([late.status, late.retryAfter, late.text], [503, '1', QUEUE_TEXT]);
      assert.deepEqual([(await overload(short)).shed.extprocQueueTimeout, (await overload(short)).extprocQueue.queued], [1, 1]);

      letGo();
      for (const a of await Promise.all([first, ...queued, holder])) assert.equal(a.status, 200);
    } finally {
      letGo();
      await full.stop();
      await short.stop();
    }
  });
});
