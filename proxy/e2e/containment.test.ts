/**
 * The containment boundary, end to end: work the proxy starts on a peer's input that throws where nothing expected
 * it ends that request alone — 500 `PROXY_ERR_INTERNAL` with its request id when nothing was sent yet, logged once
 * and counted in `/stats` `internalErrors` and `actor_edge_proxy_internal_errors_total{where}` — and the proxy goes
 * on serving, with nothing left in flight. The faults come from a built-in stage of the test's own that breaks its
 * contract on request: its filter throws where the chain reads it, its access-log fields throw when the request
 * finishes, its admin route throws.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { assembleStages } from '../stages/assemble.js';
import type { ProxyStage, StageDeps } from '../stages/stage.js';
import type { ChainFilter } from '../chain/filter-set.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

const HOST = actorHost('contained-actor');

/** What the faulty stage breaks next (each fault fires once). */
const armed = { filter: false };

const faultyFilter = {
  name: 'faulty',
  get onRequest() {
    if (armed.filter) {
      armed.filter = false;
      throw new Error('the faulty stage broke its contract');
    }
    return undefined;
  },
} as unknown as ChainFilter;

const faultyAdmin: FastifyPluginAsync = async (app) => {
  app.get('/faulty', async () => {
    throw new Error('the faulty admin route broke');
  });
};

const faultyStage: ProxyStage = {
  filter: faultyFilter,
  admin: faultyAdmin,
  logFields: (ctx) => {
    if (ctx.path === '/boom-log') throw new Error('the faulty stage could not log');
    return undefined;
  },
};

let up: Upstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('the containment boundary', () => {
  before(async () => {
    up = await startUpstream((_req, res) => res.end('ok'));
    ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
    proxy = await startTestProxy({
      mode: 'in-process',
      args: ['--actor-cache', 'off', '--extproc', ep.address],
      assemble: async (deps: StageDeps) => [faultyStage, ...(await assembleStages(deps))],
    });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
    await up?.close();
  });

  interface StatsDoc {
    readonly requests: { readonly inFlight: number };
    readonly internalErrors: Record<string, number>;
  }

  async function stats(): Promise<StatsDoc> {
    return (await (await fetch(`${proxy.admin}/stats`)).json()) as StatsDoc;
  }

  async function h1(path: string): Promise<{ status: number; body: string; requestId: string | undefined; connection: string | undefined }> {
    const r = await request(`${proxy.ingress}${path}`, { headers: { host: HOST, 'x-request-id': `req-${path.slice(1)}` } });
    return { status: r.statusCode, body: await r.body.text(), requestId: r.headers['x-request-id'] as string | undefined, connection: r.headers.connection as string | undefined };
  }

  function h2(path: string): Promise<{ status: number; body: string; requestId: string | undefined }> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(proxy.ingress);
      session.on('error', reject);
      const stream = session.request({ ':method': 'GET', ':path': path, ':authority': HOST, 'x-request-id': `req-h2-${path.slice(1)}` });
      const chunks: Buffer[] = [];
      let status = 0;
      let requestId: string | undefined;
      stream.on('response', (h) => {
        status = Number(h[':status']);
        requestId = h['x-request-id'] as string | undefined;
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', reject);
      stream.on('close', () => {
        session.close();
        resolve({ status, body: Buffer.concat(chunks).toString(), requestId });
      });
    });
  }

  async function settled(): Promise<StatsDoc> {
    await waitFor(async () => (await stats()).requests.inFlight === 0, 5000, 'no request left in flight');
    return stats();
  }

  test('HTTP/1.1: a throw inside the chain ends that request alone with 500 PROXY_ERR_INTERNAL and its request id', async () => {
    const before = (await stats()).internalErrors['http1-request'] ?? 0;
    armed.filter = true;
    const r = await h1('/boom');
    assert.equal(r.status, 500);
    assert.match(r.body, /internal proxy error/);
    assert.equal(r.requestId, 'req-boom', 'the answer names the request');
    assert.equal(r.connection, 'close', 'a connection whose request broke inside the proxy is not reused');
    const ok = await h1('/after');
    assert.equal(ok.status, 200, 'the next request is served');
    const s = await settled();
    assert.equal(s.internalErrors['http1-request'], before + 1, 'counted once, where it began');
    const lines = proxy.logs().filter((l) => l.msg === 'internal error: contained, ending this work alone' && l.requestId === 'req-boom');
    assert.equal(lines.length, 1, 'logged once, with the request id');
    assert.match(String((lines[0]?.err as { stack?: string })?.stack), /faulty stage broke its contract/, 'with its stack');
  });

  test('HTTP/2: the same throw ends that stream alone; the session and the proxy go on', async () => {
    const before = (await stats()).internalErrors['h2-stream'] ?? 0;
    armed.filter = true;
    const r = await h2('/boom2');
    assert.equal(r.status, 500);
    assert.equal(r.requestId, 'req-h2-boom2');
    assert.equal((await h2('/after')).status, 200);
    const s = await settled();
    assert.equal(s.internalErrors['h2-stream'], before + 1);
  });

  test('a throw when a request finishes (after its answer was sent) is contained: counted, nothing left in flight', async () => {
    const before = (await stats()).internalErrors['http1-request'] ?? 0;
    const r = await h1('/boom-log');
    assert.equal(r.status, 200, 'the answer was already on its way');
    const s = await settled();
    assert.equal(s.internalErrors['http1-request'], before + 1);
    assert.equal((await h1('/after-log')).status, 200);
  });

  test('a CONNECT pipelined behind a GET still in service waits its turn (found by the fuzz suite): both answered, nothing contained', async () => {
    const before = (await stats()).internalErrors.upgrade ?? 0;
    const socket = net.connect(Number(proxy.address.split(':').pop()), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write(`GET /first HTTP/1.1\r\nHost: ${HOST}\r\n\r\nCONNECT ${HOST}:443 HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    await waitFor(() => (Buffer.concat(chunks).toString().match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 2 || socket.destroyed, 5000, 'two answers');
    socket.destroy();
    const statuses = (Buffer.concat(chunks).toString().match(/HTTP\/1\.1 (\d{3})/g) ?? []).map((l) => l.slice(9));
    assert.deepEqual(statuses.slice(0, 1), ['200'], 'the GET is answered first');
    assert.equal(statuses.length, 2, 'the CONNECT is answered after it (an authority-form target on the ingress is refused)');
    assert.match(statuses[1] ?? '', /^4\d\d$/);
    const s = await settled();
    assert.equal(s.internalErrors.upgrade, before, 'nothing was contained');
  });

  test('an admin route that throws answers 500 and counts as admin; the metric carries the where label', async () => {
    const r = await fetch(`${proxy.admin}/faulty`);
    assert.equal(r.status, 500);
    const s = await stats();
    assert.equal(s.internalErrors.admin, 1);
    const metrics = await (await fetch(`${proxy.admin}/metrics`)).text();
    assert.match(metrics, /^actor_edge_proxy_internal_errors_total\{where="admin"\} 1$/m);
    assert.match(metrics, /^actor_edge_proxy_internal_errors_total\{where="h2-stream"\} 1$/m);
  });
});
