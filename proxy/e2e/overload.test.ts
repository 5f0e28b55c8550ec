/**
 * The overload manager end to end, in one process, its monitors' readings injected: at `shed-misses` a miss is
 * answered 503 with Retry-After while a hit (an actor in the cache) is served on an open connection, a new
 * connection is closed at once, and `/ready` answers 503; at `shed-all` the hit is shed too; back to normal step by
 * step, everything is served again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { Client, request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { getJson, routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import type { Readings } from '../ops/overload/levels.js';

const OVERLOADED = 'the proxy is overloaded: retry later\n';

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
let readings: Readings = { loopDelayMs: 0, heapUsedBytes: 0 };

describe('the overload manager', () => {
  before(async () => {
    up = await startUpstream((_req, res) => res.end('ok'));
    ep = await startScriptedExtProc(() => routeTo(up.address));
    proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      // Heap thresholds of 1000 and 2000 bytes against the injected readings; sampled every 10 ms.
      args: ['--access-log', 'off', '--cache-ttl-ms', '600000', '--overload-heap-bytes', '1000', '--overload-heap-critical-bytes', '2000'],
      overload: { sampler: () => readings, intervalMs: 10 },
    });
  });

  after(async () => {
    await proxy.stop();
    await ep.close();
    await up.close();
  });

  async function state(): Promise<string> {
    return ((await getJson(`${proxy.admin}/stats`)).overload as { state: string }).state;
  }

  async function until(name: string): Promise<void> {
    await waitFor(async () => (await state()) === name, 10_000, `the overload state ${name}`);
  }

  async function get(client: Client, actor: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    const res = await client.request({ path: '/', method: 'GET', headers: { host: actorHost(actor) } });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async function ready(): Promise<{ status: number; text: string }> {
    const res = await request(`${proxy.admin}/ready`);
    return { status: res.statusCode, text: await res.body.text() };
  }

  /** Connects to the ingress; resolves with what the connection got before it closed (nothing: refused at once). */
  async function refusedConnection(): Promise<Buffer> {
    const [host, port] = [proxy.address.slice(0, proxy.address.lastIndexOf(':')), Number(proxy.address.slice(proxy.address.lastIndexOf(':') + 1))];
    const socket = net.connect({ host, port });
    socket.on('error', () => undefined);
    const data: Buffer[] = [];
    socket.on('data', (c: Buffer) => data.push(c));
    await once(socket, 'connect');
    socket.write(`GET / HTTP/1.1\r\nhost: ${actorHost('hit')}\r\n\r\n`);
    await once(socket, 'close');
    return Buffer.concat(data);
  }

  test('shed-misses: a miss gets 503 + Retry-After, a hit is served, a new connection is closed, /ready 503; shed-all sheds the hit too', async () => {
    const client = new Client(proxy.ingress, { pipelining: 1 }); // one connection, opened while the proxy is normal
    try {
      await until('normal');
      assert.equal((await get(client, 'hit')).status, 200, 'a miss learns the binding');
      assert.equal((await ready()).status, 200);

      readings = { loopDelayMs: 0, heapUsedBytes: 1500 };
      await until('shed-misses');
      const hit = await get(client, 'hit');
      assert.equal(hit.status, 200, 'the cached actor is served');
      assert.equal(hit.text, 'ok');
      const miss = await get(client, 'cold');
      assert.equal(miss.status, 503);
      assert.equal(miss.headers['retry-after'], '1');
      assert.equal(miss.text, OVERLOADED);
      const streams = ep.streams;
      const r = await ready();
      assert.equal(r.status, 503);
      assert.match(r.text, /^NOT_READY\noverloaded: shed-misses \(heap used 0\.0 MiB >= 0\.0 MiB\)/);
      assert.equal((await refusedConnection()).length, 0, 'a new connection is closed before any answer');
      assert.equal(ep.streams, streams, 'the shed miss opened no ext_proc stream');

      readings = { loopDelayMs: 0, heapUsedBytes: 2500 };
      await until('shed-all');
      const shedHit = await get(client, 'hit');
      assert.equal(shedHit.status, 503);
      assert.equal(shedHit.headers['retry-after'], '1');
      assert.equal(shedHit.headers.connection, 'close', 'the client is sent elsewhere');
      assert.equal(shedHit.text, OVERLOADED);

      readings = { loopDelayMs: 0, heapUsedBytes: 0 };
      await until('normal');
      assert.equal((await ready()).status, 200);
      assert.equal((await get(client, 'hit')).status, 200, 'a new connection, served again');
      assert.equal((await get(client, 'cold')).status, 200, 'misses too');

      const s = (await getJson(`${proxy.admin}/stats`)).overload as Record<string, Record<string, unknown>>;
      assert.deepEqual(s.shed, { overloadMiss: 1, overloadAll: 1, extprocQueueTimeout: 0, extprocQueueFull: 0, replayBudget: 0, bodyBudget: 0 });
      assert.deepEqual(s.connections?.refused, { limit: 0, overload: 1 });
      assert.deepEqual(s.transitions, { normal: 1, 'shed-misses': 2, 'shed-all': 1 }, 'up 0→1→2, down 2→1→0');
      const metrics = await (await request(`${proxy.admin}/metrics`)).body.text();
      assert.match(metrics, /^actor_edge_proxy_overload_state 0$/m);
      assert.match(metrics, /^actor_edge_proxy_shed_total\{reason="overload_miss"\} 1$/m);
      assert.match(metrics, /^actor_edge_proxy_shed_total\{reason="overload_all"\} 1$/m);
      assert.match(metrics, /^actor_edge_proxy_connections_refused_total\{reason="overload"\} 1$/m);
      assert.match(metrics, /^actor_edge_proxy_overload_heap_threshold_bytes\{state="shed-all"\} 2000$/m);
    } finally {
      await client.close();
    }
  });
});
