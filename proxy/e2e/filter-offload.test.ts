/**
 * End to end, real proxies in the test's process: a filter module's `offload` export on the filter worker pool
 * (`--filter-workers`). The decision is applied (header changes reach the worker, a reply is answered); a call that
 * finds the queue full runs inline (counted); a client that leaves drops its result (stale, counted); a call that
 * throws fails its own request (500) and one whose thread dies fails its own and the thread is replaced; a call that
 * outlives `--filter-timeout-ms` gets the filter-timeout answer and its result is stale; a reload runs the new code
 * in the workers; and with 0 workers (inline) a generated set of requests is answered byte for byte as with 2.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startUpstream, type Upstream } from '../testing/helpers.js';
import { startScriptedRoute, type ScriptedRoute } from '../testing/edge-harness.js';
import type { InProcessTestProxy } from '../testing/proxy.js';

const HOST = actorHost('offloaded');
const FIXTURE = fileURLToPath(new URL('../chain/offload/testing/offload-fixture.js', import.meta.url));

let upstream: Upstream;
let dir: string;
/** 1 worker, a queue of 1, a 1 s filter timeout, and the reloadable generated module (gen.mjs, written into a temporary folder) behind the fixture. */
let one: ScriptedRoute<InProcessTestProxy>;
let inline: ScriptedRoute<InProcessTestProxy>;
let two: ScriptedRoute<InProcessTestProxy>;

/** A module whose offloaded part names its version: `x-gen: <version>` on requests with `x-gen-ask`. */
function writeGen(version: number): void {
  writeFileSync(
    path.join(dir, 'gen.mjs'),
    `export const offload = () => ({ kind: 'continue', setHeaders: { 'x-gen': '${version}' } });\n` +
      `export default ({ offload: run }) => ({ name: 'gen', async onRequest(ctx) { if (!ctx.headers.has('x-gen-ask')) return { kind: 'continue' };` +
      ` const d = await run(ctx, {}); for (const [k, v] of Object.entries(d.setHeaders ?? {})) ctx.headers.set(k, v); return { kind: 'continue' }; } });\n`,
  );
}

describe('filter offload on the filter worker pool', () => {
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'filter-offload-'));
    writeGen(0);
    // The worker's answer names the request headers the filters change.
    upstream = await startUpstream((req, res, body) => {
      const seen = Object.fromEntries(['x-where', 'x-echo', 'x-remove-me', 'x-gen'].map((h) => [h, req.headers[h] ?? null]));
      const text = JSON.stringify({ method: req.method, bodyLength: body.length, seen });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    const common = ['--access-log', 'off', '--filter', FIXTURE];
    one = await startScriptedRoute(upstream.address, [...common, '--filter', path.join(dir, 'gen.mjs'), '--filter-workers', '1', '--filter-backlog', '1', '--filter-timeout-ms', '1000']);
    inline = await startScriptedRoute(upstream.address, [...common, '--filter-workers', '0']);
    two = await startScriptedRoute(upstream.address, [...common, '--filter-workers', '2']);
  });

  after(async () => {
    await Promise.all([one?.close(), inline?.close(), two?.close()]);
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  interface Answer {
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }

  async function send(route: ScriptedRoute<InProcessTestProxy>, headers: Record<string, string>, body?: Uint8Array, signal?: AbortSignal): Promise<Answer> {
    const res = await request(`${route.proxy.ingress}/r`, { method: body === undefined ? 'GET' : 'POST', headers: { host: HOST, ...headers }, ...(body === undefined ? {} : { body }), ...(signal === undefined ? {} : { signal }) });
    return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
  }

  const seen = (a: Answer): Record<string, string | null> => (JSON.parse(a.body.toString()) as { seen: Record<string, string | null> }).seen;

  async function offloadStats(route: ScriptedRoute<InProcessTestProxy>): Promise<{ workers: { running: number }; backlog: { waiting: number }; calls: { pool: number; inline: number }; stale: number; errors: number }> {
    const res = await request(`${route.proxy.admin}/stats`);
    return ((await res.body.json()) as { filterOffload: never }).filterOffload;
  }

  test('the worker decides: header changes reach the upstream, a reply is answered; 0 workers decide on the main thread', async () => {
    const before = await offloadStats(two);
    const changed = await send(two, { 'x-op': 'where', 'x-remove-me': 'yes' });
    assert.equal(changed.status, 200);
    assert.deepEqual(seen(changed), { 'x-where': 'worker', 'x-echo': null, 'x-remove-me': null, 'x-gen': null });
    const replied = await send(two, { 'x-op': 'reply' }, Buffer.from('teapot body'));
    assert.equal(replied.status, 418);
    assert.equal(replied.body.toString(), 'teapot body');
    const after = await offloadStats(two);
    assert.equal(after.calls.pool - before.calls.pool, 2);
    assert.equal(after.calls.inline - before.calls.inline, 0);
    assert.equal(after.workers.running, 2);
    assert.equal(seen(await send(inline, { 'x-op': 'where' }))['x-where'], 'main');
  });

  test('a call that finds the queue full runs inline (counted); clients that leave drop their results (stale, counted)', async () => {
    const before = await offloadStats(one);
    const leave = new AbortController();
    const busy = send(one, { 'x-op': 'sleep', 'x-ms': '30000' }, Buffer.from('a'), leave.signal).catch((err: Error) => err);
    await waitFor(async () => (await offloadStats(one)).workers.running === 1 && (await offloadStats(one)).backlog.waiting === 0, 5000, 'the first call on the thread');
    const queued = send(one, { 'x-op': 'sleep', 'x-ms': '30000' }, Buffer.from('b'), leave.signal).catch((err: Error) => err);
    await waitFor(async () => (await offloadStats(one)).backlog.waiting === 1, 5000, 'the second call queued');
    const overflow = await send(one, { 'x-op': 'where' });
    assert.equal(seen(overflow)['x-where'], 'main');
    leave.abort();
    assert.ok((await busy) instanceof Error);
    assert.ok((await queued) instanceof Error);
    await waitFor(async () => (await offloadStats(one)).stale - before.stale === 2, 5000, 'both results stale');
    const after = await offloadStats(one);
    assert.equal(after.calls.inline - before.calls.inline, 1);
    assert.equal(after.errors - before.errors, 0);
    // The running call's thread was ended with its request; its replacement serves the next.
    assert.equal(seen(await send(one, { 'x-op': 'where' }))['x-where'], 'worker');
  });

  test('a call that throws, or whose thread dies, fails its own request with 500; the pool serves the next', async () => {
    const before = await offloadStats(one);
    const thrown = await send(one, { 'x-op': 'throw' });
    assert.equal(thrown.status, 500);
    assert.equal(thrown.body.toString(), 'internal error in a request filter\n'); // PROXY_ERR_FILTER_FAILED's text
    assert.equal(seen(await send(one, { 'x-op': 'where' }))['x-where'], 'worker');
    const died = await send(one, { 'x-op': 'exit' });
    assert.equal(died.status, 500);
    assert.equal(died.body.toString(), 'internal error in a request filter\n');
    assert.equal(seen(await send(one, { 'x-op': 'where' }))['x-where'], 'worker');
    const after = await offloadStats(one);
    assert.equal(after.errors - before.errors, 2);
    assert.equal(after.workers.running, 1);
  });

  test('a call that outlives --filter-timeout-ms gets 504 PROXY_ERR_FILTER_TIMEOUT; its result is stale', async () => {
    const before = await offloadStats(one);
    const timedOut = await send(one, { 'x-op': 'sleep', 'x-ms': '30000' });
    assert.equal(timedOut.status, 504);
    assert.equal(timedOut.body.toString(), 'a request filter timed out\n'); // PROXY_ERR_FILTER_TIMEOUT's text
    await waitFor(async () => (await offloadStats(one)).stale - before.stale === 1, 5000, 'the timed-out result stale');
    assert.equal((await offloadStats(one)).errors - before.errors, 0);
    assert.equal(seen(await send(one, { 'x-op': 'where' }))['x-where'], 'worker');
  });

  test('a reload runs the new module in the workers', async () => {
    assert.equal(seen(await send(one, { 'x-gen-ask': '1' }))['x-gen'], '0');
    writeGen(1);
    const report = await one.proxy.running.reload();
    assert.equal(report.kind, 'reloaded');
    assert.equal(seen(await send(one, { 'x-gen-ask': '1' }))['x-gen'], '1');
  });

  test('0 workers (inline) and 2 workers answer a generated set of requests byte for byte the same', async () => {
    const op = fc.option(fc.constantFrom('reply', 'throw', 'bad', 'echo', 'Ünïcode', ''), { nil: undefined });
    const body = fc.option(fc.uint8Array({ maxLength: 2048 }), { nil: undefined });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(op, body, async (o, b) => {
        const headers: Record<string, string> = { 'x-request-id': `offload-diff-${n++}` };
        if (o !== undefined) headers['x-op'] = encodeURIComponent(o);
        const [a, c] = await Promise.all([send(inline, headers, b), send(two, headers, b)]);
        const { date: _a, ...ha } = a.headers;
        const { date: _c, ...hc } = c.headers;
        assert.equal(a.status, c.status);
        assert.deepEqual(ha, hc);
        assert.deepEqual(a.body, c.body);
      }),
      { seed: 4646, numRuns: 60 },
    );
    assert.ok((await offloadStats(two)).calls.pool >= 30, 'the pool side did run in the pool');
  });
});
