/**
 * End to end, a real proxy in the test's process: every HTTP/2 stream ends, and its request leaves the in-flight
 * count, however the stream's two sides end — a response complete while the client still sends its request (the
 * proxy's 408, a worker that answered without reading the body) closes the stream with RST_STREAM NO_ERROR; a
 * HEAD stream the client resets ends; a connection node's session gave up on (GOAWAY after a header block it
 * cannot decompress) is closed; a client's FIN ends the streams still open on its connection as a client gone,
 * their upstream requests cancelled.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { once } from 'node:events';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startScriptedRoute, type ScriptedRoute } from '../testing/edge-harness.js';
import { getJson, startUpstream, type Upstream } from '../testing/helpers.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { FRAME, H2_ERROR, RawH2 } from '../testing/raw-h2.js';

const HOST = actorHost('streams');
const REQUEST_TIMEOUT_MS = 1000;
/**
 * The proxy asks a client for a PING acknowledgement every keep-alive period and gives it as long again: a
 * connection that stopped answering is closed after twice this time at the earliest.
 */
const KEEP_ALIVE_MS = 1000;
const WITHIN_MS = 5000;

let upstream: Upstream;
let route: ScriptedRoute<InProcessTestProxy>;
let proxy: InProcessTestProxy;
/** Paths of upstream requests that ended before their answer did (cancelled by the proxy). */
const cancelled: string[] = [];

describe('how HTTP/2 streams end', () => {
  before(async () => {
    upstream = await startUpstream(
      (req: http.IncomingMessage, res: http.ServerResponse) => {
        res.on('close', () => !res.writableFinished && cancelled.push(req.url ?? ''));
        if (req.url === '/early') res.end('early'); // without reading the body
        else if (req.url === '/drip') req.resume().on('end', () => res.end('all read'));
        else if (req.url?.startsWith('/slow') === true) setTimeout(() => res.end('late'), 3000);
        else res.end('ok');
      },
      '127.0.0.1',
      { readBody: false },
    );
    route = await startScriptedRoute(upstream.address, [
      '--actor-cache', 'off',
      '--headers-timeout-ms', String(REQUEST_TIMEOUT_MS), '--request-timeout-ms', String(REQUEST_TIMEOUT_MS), '--keep-alive-timeout-ms', String(KEEP_ALIVE_MS),
    ]);
    proxy = route.proxy;
  });

  after(async () => {
    await route?.close();
    await upstream?.close();
  });

  async function inFlight(): Promise<number> {
    return ((await getJson(`${proxy.admin}/stats`)).requests as { inFlight: number }).inFlight;
  }

  async function settled(withinMs = WITHIN_MS): Promise<void> {
    await waitFor(async () => (await inFlight()) === 0, withinMs, 'no request in flight');
  }

  /** A POST whose body the client starts and never ends; resolves with its status and how its stream closed. */
  async function unfinishedPost(path: string): Promise<{ status: number; body: string; rstCode: number | undefined; session: http2.ClientHttp2Session }> {
    const session = http2.connect(proxy.ingress);
    session.on('error', () => undefined);
    const stream = session.request({ ':method': 'POST', ':path': path, ':authority': HOST, 'content-length': '100' }, { endStream: false });
    stream.on('error', () => undefined);
    stream.write('x');
    let body = '';
    stream.on('data', (c: Buffer) => (body += c.toString()));
    const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
    const closed = once(stream, 'close');
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the stream did not close while its client kept it open')), WITHIN_MS).unref());
    await Promise.race([closed, deadline]);
    return { status: Number(headers[':status']), body, rstCode: stream.rstCode, session };
  }

  test('HTTP/2: a 408 while the body still arrives closes the stream (NO_ERROR); the request leaves the in-flight count', async () => {
    const r = await unfinishedPost('/drip');
    try {
      assert.equal(r.status, 408);
      assert.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      await settled();
    } finally {
      r.session.destroy();
    }
  });

  test('HTTP/2: a worker that answers without reading the body: the complete answer, then the stream closes (NO_ERROR)', async () => {
    const r = await unfinishedPost('/early');
    try {
      assert.equal(r.status, 200);
      assert.equal(r.body, 'early');
      assert.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      await settled();
    } finally {
      r.session.destroy();
    }
  });

  test('HTTP/2: a HEAD stream the client resets before its answer ends; its upstream request is cancelled', async () => {
    const session = http2.connect(proxy.ingress);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':method': 'HEAD', ':path': '/slow-head', ':authority': HOST });
      stream.on('error', () => undefined);
      await waitFor(() => upstream.requests.some((r) => r.url === '/slow-head'), WITHIN_MS, 'the HEAD at the worker');
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await settled();
      await waitFor(() => cancelled.includes('/slow-head'), WITHIN_MS, 'the upstream HEAD cancelled');
    } finally {
      session.destroy();
    }
  });

  test('HTTP/2: after GOAWAY for a header block node cannot decompress, the connection is closed and its open stream ends', async () => {
    const c = await RawH2.connect(proxy.address);
    try {
      c.headers(1, [[':method', 'GET'], [':scheme', 'http'], [':path', '/slow-goaway'], [':authority', HOST]]);
      await waitFor(() => upstream.requests.some((r) => r.url === '/slow-goaway'), WITHIN_MS, 'stream 1 at the worker');
      // One field over HPACK's 64 KiB limit: a COMPRESSION_ERROR for the whole connection.
      c.headers(3, [[':method', 'GET'], [':scheme', 'http'], [':path', `/${'p'.repeat(80_000)}`], [':authority', HOST]]);
      const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY, WITHIN_MS);
      assert.ok(goaway !== undefined && RawH2.errorCode(goaway) !== H2_ERROR.NO_ERROR, 'GOAWAY with an error');
      await waitFor(() => c.closed, WITHIN_MS, 'the proxy closing the connection');
      await settled();
    } finally {
      c.close();
    }
  });

  test('HTTP/2: a client FIN with a stream open ends the stream as a client gone (499); its upstream request is cancelled', async () => {
    const before = (await getJson(`${proxy.admin}/stats`)).requests as { byStatus: Record<string, number> };
    const c = await RawH2.connect(proxy.address);
    try {
      c.headers(1, [[':method', 'GET'], [':scheme', 'http'], [':path', '/slow-fin'], [':authority', HOST]]);
      await waitFor(() => upstream.requests.some((r) => r.url === '/slow-fin'), WITHIN_MS, 'the stream at the worker');
      c.socket.end();
      // Sooner than the PING probe could close the connection (this client acknowledges no PING).
      await settled(KEEP_ALIVE_MS);
      await waitFor(() => cancelled.includes('/slow-fin'), WITHIN_MS, 'the upstream request cancelled');
      const now = (await getJson(`${proxy.admin}/stats`)).requests as { byStatus: Record<string, number> };
      assert.equal((now.byStatus['4xx'] ?? 0) - (before.byStatus['4xx'] ?? 0), 1, 'counted as a 4xx (499)');
    } finally {
      c.close();
    }
  });
});
