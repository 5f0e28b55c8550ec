/**
 * The router and the re-run loop against real sockets: a scripted ext_proc server and plain node:http upstreams
 * on loopback, and the real proxy (chain, router, ingress) in this process.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

import { createHash } from 'node:crypto';
import http from 'node:http';
import { request } from 'undici';
import { freePort as freeClosedPort } from '../../lib/loopback.js';
import { actorHost } from '../../lib/testing/actors.js';
import {
  getJson,
  routeTo,
  startScriptedExtProc,
  
  startUpstream,
  type ScriptedExtProc,
  type Upstream,
} from '../testing/helpers.js';
import type { ProxyStatsBlock } from '../ops/stats.js';
import type { Dispatcher } from 'undici';

let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
let good: Upstream;
let stale: Upstream;
let resetter: Upstream;
let slow: Upstream;
let closedAddress: string;
/** Addresses ext_proc hands out, one per stream. */
let routes: string[] = [];

describe('router', () => {
  before(async () => {
    good = await startUpstream((req, res, body) => {
      res.setHeader('content-type', 'application/json');
      if (req.headers['x-test-forge-stale'] === '1') res.setHeader('x-ate-assignment-stale', 'true');
      if (req.headers['x-test-bare-421'] === '1') res.statusCode = 421;
      res.end(JSON.stringify({ who: 'good', len: body.length, sha: createHash('sha256').update(body).digest('hex') }));
    });
    stale = await startUpstream((_req, res) => {
      res.writeHead(421, { 'x-ate-assignment-stale': 'TRUE', 'content-type': 'text/plain' });
      res.end('misdirected request');
    });
    // Resets once it has read the whole request: the request was written, so it may have been processed.
    resetter = await startUpstream((req) => req.socket.destroy());
    slow = await startUpstream((_req, res) => setTimeout(() => res.end('late'), 3000).unref(), '127.0.0.1', { readBody: false });
    closedAddress = `127.0.0.1:${await freeClosedPort()}`;
    ep = await startScriptedExtProc(() => routeTo(routes.shift() ?? good.address));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--route-timeout-ms', '500', '--max-replay-body-bytes', '65536'] });
  });

  after(async () => {
    await proxy.stop();
    await ep.close();
    for (const u of [good, stale, resetter, slow]) await u.close();
  });

  // Every test leaves no ext_proc stream open behind it (checked after each, so no test depends on another).
  afterEach(async () => {
    await waitFor(async () => (await stats()).extproc.active === 0 && ep.active === 0, 5000, 'every ext_proc stream to close');
    const s = await stats();
    assert.equal(s.extproc.active, 0);
    assert.equal(ep.active, 0);
  });

  async function stats(): Promise<ProxyStatsBlock> {
    return (await getJson(`${proxy.admin}/stats`)) as unknown as ProxyStatsBlock;
  }

  async function send(opts: { method?: string; body?: string | Buffer; headers?: Record<string, string>; name?: string } = {}) {
    const res = await request(`${proxy.ingress}/x`, {
      method: (opts.method ?? 'GET') as 'GET',
      headers: { host: actorHost(opts.name ?? 'a'), ...opts.headers },
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }

  test('a stale answer is never relayed: the request re-runs through ext_proc to the new worker', async () => {
    routes = [stale.address, good.address];
    const before = await stats();
    const goodBefore = good.requests.length;
    const r = await send();
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.text).who, 'good');
    assert.equal(r.headers['x-ate-assignment-stale'], undefined);
    assert.equal(good.requests.length, goodBefore + 1, 'the new worker got the request exactly once');
    const after = await stats();
    assert.equal(after.reruns.stale - before.reruns.stale, 1);
    assert.equal(after.extproc.streams - before.extproc.streams, 2);
  });

  test('a POST body is replayed intact on the re-run and arrives exactly once', async () => {
    routes = [stale.address, good.address];
    const body = Buffer.alloc(40_000, 'p');
    const goodBefore = good.requests.length;
    const r = await send({ method: 'POST', body });
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.text).sha, createHash('sha256').update(body).digest('hex'));
    assert.equal(good.requests.length, goodBefore + 1);
  });

  test('a body above the replay limit meeting a stale worker gets a clear 503 and is not delivered anywhere', async () => {
    routes = [stale.address, good.address];
    const goodBefore = good.requests.length;
    const r = await send({ method: 'POST', body: Buffer.alloc(200_000, 'b') });
    assert.equal(r.status, 503);
    assert.match(r.text, /too large to replay/);
    assert.equal(good.requests.length, goodBefore);
  });

  test('re-runs exhausted: a 503, never the worker 421 or its stale header', async () => {
    routes = [stale.address, stale.address, stale.address]; // the first pass and --max-reruns (2) re-runs
    const r = await send();
    assert.equal(r.status, 503);
    assert.match(r.text, /stale/);
    assert.equal(r.headers['x-ate-assignment-stale'], undefined);
  });

  test('a bare 421 is the actor answering: relayed as is', async () => {
    routes = [good.address];
    const r = await send({ headers: { 'x-test-bare-421': '1' } });
    assert.equal(r.status, 421);
    assert.equal(JSON.parse(r.text).who, 'good');
  });

  test('x-ate-assignment-stale is removed from every response the client receives', async () => {
    routes = [good.address];
    const r = await send({ headers: { 'x-test-forge-stale': '1' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-ate-assignment-stale'], undefined);
  });

  test('a connect failure re-runs; the connect failure is counted', async () => {
    routes = [closedAddress, good.address];
    const before = await stats();
    const r = await send({ method: 'POST', body: 'x' });
    assert.equal(r.status, 200);
    const after = await stats();
    assert.equal(after.upstream.connectFailures - before.upstream.connectFailures, 1);
    assert.equal(after.reruns.connect - before.reruns.connect, 1);
  });

  test('outlier detection: a refused address is marked down; a probe that connects lets it back, and so does a resume naming it', async () => {
    const port = Number(closedAddress.slice(closedAddress.lastIndexOf(':') + 1));
    routes = [closedAddress, good.address];
    const before = await stats();
    assert.equal((await send()).status, 200);
    let s = await stats();
    assert.equal(s.upstream.outliers.ejections.refused - before.upstream.outliers.ejections.refused, 1, 'the failed connect marked it down');
    assert.equal(s.upstream.outliers.down, 1);
    // The worker comes back on that address: a probe connects and lets it back, without a request.
    const revived = http.createServer((_req, res) => res.end('back'));
    await new Promise<void>((resolve) => revived.listen(port, '127.0.0.1', resolve));
    try {
      await waitFor(async () => (await stats()).upstream.outliers.down === 0, 10_000, 'a probe to let the address back');
      s = await stats();
      assert.equal(s.upstream.outliers.readmissions.probe - before.upstream.outliers.readmissions.probe, 1);
      assert.ok(s.upstream.outliers.probes.ok - before.upstream.outliers.probes.ok >= 1);
    } finally {
      await new Promise((resolve) => revived.close(resolve));
    }
    // Down again; this time a resume that names the address lets it back (and its connect fails again).
    routes = [closedAddress, good.address];
    assert.equal((await send()).status, 200);
    routes = [closedAddress, good.address];
    assert.equal((await send()).status, 200);
    const after = await stats();
    assert.equal(after.upstream.outliers.readmissions.resume - s.upstream.outliers.readmissions.resume, 1, 'ext_proc named the down address again');
    assert.equal(after.upstream.connectFailures - s.upstream.connectFailures, 2, 'each resume that named it tried it once');
    assert.equal(after.upstream.outliers.failedFast - s.upstream.outliers.failedFast, 0, 'nothing was queued behind it');
  });

  test('a connect failure with no re-run left is a 503 naming it', async () => {
    routes = [closedAddress, closedAddress, closedAddress];
    const r = await send();
    assert.equal(r.status, 503);
    assert.match(r.text, /connect error/);
  });

  test('a reset before response headers re-runs a GET but not a POST (502: it may have reached the actor)', async () => {
    routes = [resetter.address, good.address];
    const get = await send();
    assert.equal(get.status, 200);
    routes = [resetter.address, good.address];
    const goodBefore = good.requests.length;
    const post = await send({ method: 'POST', body: 'once' });
    assert.equal(post.status, 502);
    assert.match(post.text, /not idempotent/);
    assert.equal(good.requests.length, goodBefore);
    routes = [];
  });

  test('a reset before the request body was all written re-runs even a POST: the actor cannot have had the whole request', async () => {
    let headersSeen!: () => void;
    const seen = new Promise<void>((resolve) => (headersSeen = resolve));
    // Resets as soon as the request head arrives, while the client is still sending the body.
    const early = await startUpstream((req) => {
      req.socket.destroy();
      headersSeen();
    }, '127.0.0.1', { readBody: false });
    try {
      routes = [early.address, good.address];
      const before = await stats();
      const goodBefore = good.requests.length;
      async function* body(): AsyncGenerator<Buffer> {
        yield Buffer.from('first half, ');
        await seen; // the rest only after the first upstream reset
        yield Buffer.from('second half');
      }
      const res = await request(`${proxy.ingress}/x`, {
        method: 'POST',
        headers: { host: actorHost('a') },
        body: body() as unknown as Dispatcher.DispatchOptions['body'],
      });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200);
      assert.equal(JSON.parse(text).sha, createHash('sha256').update('first half, second half').digest('hex'));
      assert.equal(good.requests.length, goodBefore + 1);
      const after = await stats();
      assert.equal(after.reruns.reset - before.reruns.reset, 1);
      assert.equal(after.upstream.resets - before.upstream.resets, 1);
    } finally {
      routes = [];
      await early.close();
    }
  });

  test('no response headers within the route timeout → 504', async () => {
    routes = [slow.address];
    const r = await send();
    assert.equal(r.status, 504);
    assert.match(r.text, /upstream request timeout/);
  });

  test('the router never sends anywhere but the route: a filter-less request without metadata gets 503', async () => {
    ep.script = () => ({ request_headers: { response: { status: 'CONTINUE' } } });
    try {
      const r = await send({ headers: { 'x-envoy-original-dst-host': good.address, 'x-ate-original-dst': good.address } });
      assert.equal(r.status, 503);
      assert.equal(r.text, 'no healthy upstream\n');
    } finally {
      ep.script = () => routeTo(routes.shift() ?? good.address);
    }
  });

  test('server-sent events are relayed one by one, as they are written', async () => {
    let sendNext: (() => void) | undefined;
    const sse = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let n = 0;
      sendNext = () => {
        n++;
        if (n <= 3) res.write(`data: event ${n}\n\n`);
        if (n === 3) res.end();
      };
      sendNext();
    });
    try {
      routes = [sse.address];
      const res = await request(`${proxy.ingress}/events`, { headers: { host: actorHost('a') } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      const seen: string[] = [];
      for await (const chunk of res.body) {
        seen.push(String(chunk));
        // The next event is written only after this one reached the client: no buffering in between.
        sendNext?.();
      }
      assert.deepEqual(seen, ['data: event 1\n\n', 'data: event 2\n\n', 'data: event 3\n\n']);
    } finally {
      await sse.close();
    }
  });

  test('a 10 MB upload and a 10 MB download stream through (the upstream sees bytes before the client finished)', async () => {
    const size = 10 * 1024 * 1024;
    let firstBytesAt = -1;
    let clientSent = 0;
    const sink = await startUpstream(
      (req, res) => {
        const hash = createHash('sha256');
        let n = 0;
        req.on('data', (c: Buffer) => {
          if (firstBytesAt < 0) firstBytesAt = clientSent;
          hash.update(c);
          n += c.length;
        });
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-upload-sha': hash.digest('hex'), 'x-upload-len': String(n) });
          const block = Buffer.alloc(64 * 1024, 'd');
          let left = size;
          const pump = (): void => {
            while (left > 0) {
              left -= block.length;
              if (!res.write(block)) return void res.once('drain', pump);
            }
            res.end();
          };
          pump();
        });
      },
      '127.0.0.1',
      { readBody: false },
    );
    try {
      routes = [sink.address];
      const upload = createHash('sha256');
      async function* body(): AsyncGenerator<Buffer> {
        const block = Buffer.alloc(64 * 1024, 'u');
        for (let sent = 0; sent < size; sent += block.length) {
          upload.update(block);
          clientSent += block.length;
          yield block;
        }
      }
      const res = await request(`${proxy.ingress}/upload`, {
        method: 'POST',
        headers: { host: actorHost('a') },
        body: body() as unknown as Dispatcher.DispatchOptions['body'],
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-upload-len'], String(size));
      assert.equal(res.headers['x-upload-sha'], upload.digest('hex'));
      assert.ok(firstBytesAt >= 0 && firstBytesAt < size, 'the upstream saw the body before the client had sent all of it');
      let received = 0;
      for await (const chunk of res.body) received += (chunk as Buffer).length;
      assert.equal(received, size);
    } finally {
      await sink.close();
    }
  });
});
