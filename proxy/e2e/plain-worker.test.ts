/**
 * End to end against a plain node:http server standing in for a worker (it strips nothing and answers exactly as
 * the test says), behind a real proxy in the test's process and a scripted ext_proc: forged internal headers
 * never reach it, on the cache-miss and the cache-hit path, and server-sent events reach the client one at a
 * time — the worker writes event N+1 only after the client has read event N, so a proxy that buffers cannot
 * pass.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { request } from 'undici';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { client, hostOf, proxyStats, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { FORGEABLE_HEADERS } from '../testing/forgeable-headers.js';

/** How long the worker waits for the client to read one event before it gives up (a broken proxy, not a slow one). */
const EVENT_DEADLINE_MS = 20_000;

let worker: Upstream;
let ep: ScriptedExtProc;
let cacheOff: InProcessTestProxy;
let cacheOn: InProcessTestProxy;
/** Resolvers the SSE test sets: the worker waits on `gates[n]` before writing event n + 1. */
let gates: Promise<void>[] = [];

function serveEvents(res: http.ServerResponse, count: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  void (async () => {
    for (let n = 1; n <= count; n++) {
      res.write(`id: ${n}\ndata: event ${n}\n\n`);
      if (n === count) break;
      const seen = await Promise.race([gates[n - 1]?.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), EVENT_DEADLINE_MS).unref())]);
      if (!seen) {
        res.destroy(new Error(`the client never read event ${n}`));
        return;
      }
    }
    res.end();
  })();
}

describe('a plain node:http worker behind the proxy', () => {
  before(async () => {
    worker = await startUpstream((req, res) => {
      if (req.url?.startsWith('/sse')) return serveEvents(res, 5);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ headers: req.headers }));
    });
    ep = await startScriptedExtProc(() => routeTo(worker.address, '80'));
    [cacheOff, cacheOn] = await Promise.all([
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] }),
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--cache-ttl-ms', '600000'] }),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([cacheOff, cacheOn].map((p) => p?.stop()));
    await ep?.close();
    await worker?.close();
  });

  async function sendForged(p: InProcessTestProxy, actor: string): Promise<Record<string, string>> {
    const forged: Record<string, string> = {};
    for (const h of FORGEABLE_HEADERS) forged[h] = h === 'x-ate-target-port' ? '9999' : '127.0.0.1:1';
    const res = await request(`${p.ingress}/`, { headers: { host: hostOf(actor), ...forged }, dispatcher: client });
    assert.equal(res.statusCode, 200);
    return ((await res.body.json()) as { headers: Record<string, string> }).headers;
  }

  for (const mode of ['off', 'on'] as const) {
    test(`cache ${mode}: no client-forged internal header reaches a worker that strips nothing`, async () => {
      const p = mode === 'off' ? cacheOff : cacheOn;
      const actor = `forged-${mode}`;
      const requests = mode === 'off' ? 1 : 2; // cache on: a miss through ext_proc, then a hit that skips it
      for (let i = 0; i < requests; i++) {
        const seenBefore = ep.seen.length;
        const headers = await sendForged(p, actor);
        for (const h of FORGEABLE_HEADERS) {
          if (h === 'x-ate-target-port') assert.equal(headers[h], '80', 'the port comes from ext_proc or the authority, never the client');
          else assert.equal(headers[h], undefined, `${h} reached the worker (request ${i + 1})`);
        }
        for (const m of ep.seen.slice(seenBefore)) for (const h of FORGEABLE_HEADERS) assert.equal(m.headers[h], undefined, `${h} reached ext_proc`);
      }
      if (mode === 'on') assert.equal((await proxyStats(p)).cache.hits, 1, 'the second request took the cache-hit path');
    });
  }

  test('server-sent events: each event reaches the client before the worker writes the next', async () => {
    const opens: (() => void)[] = [];
    gates = Array.from({ length: 4 }, () => new Promise<void>((resolve) => opens.push(resolve)));
    const events: string[] = [];
    try {
      const res = await request(`${cacheOff.ingress}/sse`, { headers: { host: hostOf('events') }, dispatcher: client });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      let buffered = '';
      for await (const chunk of res.body) {
        buffered += String(chunk);
        let end: number;
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          events.push(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
          opens[events.length - 1]?.(); // only now may the worker write the next event
        }
      }
    } catch (err) {
      assert.fail(`the worker gave up after the client had read ${events.length} event(s) (the proxy held them back): ${(err as Error).message}`);
    }
    assert.deepEqual(events, [1, 2, 3, 4, 5].map((n) => `id: ${n}\ndata: event ${n}`));
  });
});
