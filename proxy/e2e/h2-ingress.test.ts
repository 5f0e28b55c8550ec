/**
 * HTTP/2 and HTTPS at the ingress, with real clients: curl over h2c (prior knowledge) and over TLS (ALPN h2, and
 * HTTP/1.1), node's http2 client, a TLS client without SNI or with an unknown ALPN, and raw frames for malformed
 * requests and floods. Every request reaches the HTTP/1.1 upstream through the same chain.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { execFile } from 'node:child_process';
import http2 from 'node:http2';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc } from '../testing/helpers.js';
import { startTrackedUpstream, type TrackedUpstream } from '../testing/edge-harness.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';
import { FRAME, H2_ERROR, RawH2 } from '../testing/raw-h2.js';

const run = promisify(execFile);
const HOST = actorHost('h2-actor');
const MAX_STREAMS = 4;

let ca: TestCa;
let up: TrackedUpstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('HTTP/2 and HTTPS at the ingress', () => {
  before(async () => {
    ca = await createTestCa();
    const cert = await ca.issue('server');
    up = await startTrackedUpstream();
    ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address,
      '--tls-listen', '127.0.0.1:0',
      '--tls-cert', cert.certFile,
      '--tls-key', cert.keyFile,
      '--h2-max-concurrent-streams', String(MAX_STREAMS),] });
  });

  after(async () => {
    up?.release();
    await proxy?.stop();
    await ep?.close();
    await up?.close();
    await ca?.remove();
  });

  const port = (address: string): string => address.slice(address.lastIndexOf(':') + 1);

  /** curl with `-w` printing the HTTP version and status after the body. */
  async function curl(args: string[]): Promise<{ version: string; status: number; body: string }> {
    const { stdout } = await run('curl', ['-sS', '--max-time', '10', '-w', '\n%{http_version} %{http_code}', ...args]);
    const cut = stdout.lastIndexOf('\n');
    const [version, status] = stdout.slice(cut + 1).split(' ');
    return { version: version as string, status: Number(status), body: stdout.slice(0, cut) };
  }


  test('curl --http2-prior-knowledge on the plain port: HTTP/2 to the client, HTTP/1.1 to the upstream, same hygiene', async () => {
    const r = await curl(['--http2-prior-knowledge', '-H', `host: ${HOST}`, '-H', 'x-ate-target-port: 9', `${proxy.ingress}/h2c?x=1`]);
    assert.equal(r.version, '2');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { path: '/h2c?x=1', bodyLength: 0 });
    const seen = up.upstream.requests.at(-1);
    assert.equal(seen?.headers.host, HOST, ':authority becomes Host');
    assert.equal(seen?.headers['x-forwarded-proto'], 'http');
    assert.equal(seen?.headers['x-ate-target-port'], '80', 'a forged internal header is replaced, as for HTTP/1.1');
    assert.ok(!(seen?.rawHeaders ?? []).some((h) => h.startsWith(':')), 'no pseudo-header reaches the upstream');
    // The same port still serves HTTP/1.1.
    const h1 = await curl(['-H', `host: ${HOST}`, `${proxy.ingress}/h1`]);
    assert.equal(h1.version, '1.1');
    assert.equal(h1.status, 200);
  });

  /** One request through node's http2 client on a connection of its own: the answer's head and body text. */
  async function h2Exchange(head: http2.OutgoingHttpHeaders, body: Buffer | string): Promise<{ headers: http2.IncomingHttpHeaders; text: string }> {
    const session = http2.connect(`${proxy.ingress}`);
    try {
      const stream = session.request(head);
      stream.end(body);
      const [headers, text] = await Promise.all([
        new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve)),
        (async () => {
          let s = '';
          for await (const c of stream) s += String(c);
          return s;
        })(),
      ]);
      return { headers, text };
    } finally {
      session.close();
    }
  }

  test('node http2 client: a POST body reaches the upstream; cookies split over fields are joined', async () => {
    const body = Buffer.alloc(100_000, 7);
    const { headers, text } = await h2Exchange({ ':method': 'POST', ':path': '/post', ':authority': HOST, cookie: ['a=1', 'b=2'] }, body);
    assert.equal(headers[':status'], 200);
    assert.deepEqual(JSON.parse(text), { path: '/post', bodyLength: body.length });
    assert.equal(up.upstream.requests.at(-1)?.headers.cookie, 'a=1; b=2');
  });

  test('an expectation other than 100-continue is ignored on HTTP/2 too: the request is served, without Expect upstream', async () => {
    const { headers, text } = await h2Exchange({ ':method': 'POST', ':path': '/expect', ':authority': HOST, expect: 'foo' }, 'abc');
    assert.equal(headers[':status'], 200);
    assert.deepEqual(JSON.parse(text), { path: '/expect', bodyLength: 3 });
    assert.equal(up.upstream.requests.at(-1)?.headers.expect, undefined);
  });

  test('HTTPS: curl --http2 negotiates h2 by ALPN, --http1.1 gets HTTP/1.1; x-forwarded-proto is https', async () => {
    const tlsPort = port(proxy.addresses.tls as string);
    const common = ['--cacert', ca.caFile, '--resolve', `localhost:${tlsPort}:127.0.0.1`, '-H', `host: ${HOST}`];
    const h2 = await curl([...common, '--http2', `https://localhost:${tlsPort}/tls-h2`]);
    assert.equal(h2.version, '2');
    assert.equal(h2.status, 200);
    assert.equal(up.upstream.requests.at(-1)?.headers['x-forwarded-proto'], 'https');
    const h1 = await curl([...common, '--http1.1', `https://localhost:${tlsPort}/tls-h1`]);
    assert.equal(h1.version, '1.1');
    assert.equal(h1.status, 200);
    assert.equal(up.upstream.requests.at(-1)?.headers['x-forwarded-proto'], 'https');
  });

  /** One HTTP/1.1 request over TLS with the given ALPN offer (no SNI: the address is an IP). */
  function tlsHttp1(alpn: string[] | undefined): Promise<{ alpn: string | false; answer: string }> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: Number(port(proxy.addresses.tls as string)), ca: [], rejectUnauthorized: false, ...(alpn ? { ALPNProtocols: alpn } : {}) }, () => {
        socket.write(`GET /no-sni HTTP/1.1\r\nhost: ${HOST}\r\nconnection: close\r\n\r\n`);
      });
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      socket.on('end', () => resolve({ alpn: socket.alpnProtocol ?? false, answer }));
      socket.on('error', reject);
    });
  }

  test('HTTPS: a client without SNI, without ALPN or with an unknown ALPN still gets HTTP/1.1', async () => {
    for (const offer of [undefined, ['foo/1'], ['http/1.1']]) {
      const r = await tlsHttp1(offer);
      assert.match(r.answer, /^HTTP\/1\.1 200 /, `offer ${JSON.stringify(offer)}`);
    }
  });

  test('malformed HTTP/2: connection-specific header, invalid pseudo-header or no :authority reset the stream; a Host unlike :authority → 400', async () => {
    const c = await RawH2.connect(proxy.address);
    try {
      const base: [string, string][] = [[':method', 'GET'], [':scheme', 'http'], [':path', '/bad'], [':authority', HOST]];
      const before = up.upstream.requests.length;
      c.headers(1, [...base, ['connection', 'keep-alive']]);
      c.headers(3, [...base, [':foo', 'bar']]);
      c.headers(5, [...base, ['transfer-encoding', 'chunked']]);
      c.headers(7, [[':method', 'GET'], [':scheme', 'http'], [':path', '/no-authority']]);
      for (const id of [1, 3, 5, 7]) {
        const rst = await c.waitFor((f) => f.type === FRAME.RST_STREAM && f.stream === id);
        assert.ok(rst, `stream ${id} reset`);
        assert.equal(RawH2.errorCode(rst), H2_ERROR.PROTOCOL_ERROR);
      }
      c.headers(9, [...base, ['host', 'other.example']]);
      const h = await c.waitFor((f) => f.type === FRAME.HEADERS && f.stream === 9);
      assert.ok(h, 'stream 9 answered');
      // :status 400 is HPACK static index 12 (an indexed field: 0x8c).
      assert.equal(h.payload[0], 0x8c, 'Host unlike :authority answered 400');
      assert.equal(up.upstream.requests.length, before, 'nothing malformed reached the upstream');
    } finally {
      c.close();
    }
  });

  test('HTTP/2 fields with CR, LF or NUL in a value, or a space in a name, never reach the worker (node drops them before the proxy sees the head)', async () => {
    const c = await RawH2.connect(proxy.address);
    try {
      const base: [string, string][] = [[':method', 'GET'], [':scheme', 'http'], [':path', '/smuggle'], [':authority', HOST]];
      const hostile: [string, string][] = [['x-cr', 'a\rb'], ['x-lf', 'a\nx-injected: 1'], ['x-nul', 'a\u0000b'], ['x bad', 'v']];
      for (let i = 0; i < hostile.length; i++) {
        const id = 1 + 2 * i;
        c.headers(id, [...base, hostile[i] as [string, string], ['x-probe', String(id)]]);
        const h = await c.waitFor((f) => (f.type === FRAME.HEADERS || f.type === FRAME.RST_STREAM) && f.stream === id);
        assert.ok(h, `stream ${id} answered or reset`);
        const seen = up.upstream.requests.find((r) => r.headers['x-probe'] === String(id));
        if (seen === undefined) continue; // reset: nothing forwarded
        for (const name of ['x-cr', 'x-lf', 'x-nul', 'x bad', 'x-injected']) assert.equal(seen.headers[name], undefined, `${name} forwarded on stream ${id}`);
      }
    } finally {
      c.close();
    }
    const after = await curl(['--http2-prior-knowledge', '-H', `host: ${HOST}`, `${proxy.ingress}/after`]);
    assert.equal(after.status, 200, 'the proxy still serves');
  });

  test('stream flood: a client opening more streams than --h2-max-concurrent-streams loses its connection; others are served', async () => {
    const c = await RawH2.connect(proxy.address);
    const arrivals = up.arrivals.length;
    try {
      await c.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & 1) === 1);
      for (let i = 0; i < MAX_STREAMS + 3; i++) c.headers(1 + 2 * i, [[':method', 'GET'], [':scheme', 'http'], [':path', `/hold-${i}`], [':authority', HOST]]);
      const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY);
      assert.ok(goaway, 'the connection is closed with GOAWAY');
      assert.notEqual(RawH2.errorCode(goaway), H2_ERROR.NO_ERROR);
      assert.ok(up.arrivals.length - arrivals <= MAX_STREAMS, 'no stream over the limit reached the upstream');
      const other = await curl(['--http2-prior-knowledge', '-H', `host: ${HOST}`, `${proxy.ingress}/other`]);
      assert.equal(other.status, 200);
    } finally {
      c.close();
    }
    await waitFor(() => up.active === 0, 5000, 'the reset streams are cancelled upstream');
  });

  test('SETTINGS flood: the flooding connection is bounded; other connections are served', async () => {
    const c = await RawH2.connect(proxy.address);
    try {
      const payload = Buffer.from([0, 3, 0, 0, 0, 100]); // MAX_CONCURRENT_STREAMS = 100
      for (let i = 0; i < 20_000; i++) c.send(FRAME.SETTINGS, 0, 0, payload);
      // node bounds the unacknowledged SETTINGS: the flooding connection is closed with GOAWAY.
      const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY, 20_000);
      assert.ok(goaway !== undefined || c.closed, 'the flooding connection is closed');
      const other = await curl(['--http2-prior-knowledge', '-H', `host: ${HOST}`, `${proxy.ingress}/after-settings-flood`]);
      assert.equal(other.status, 200);
    } finally {
      c.close();
    }
  });

  test('rapid reset: a client opening and resetting streams is bounded; other connections are served', async () => {
    const c = await RawH2.connect(proxy.address);
    const arrivals = up.arrivals.length;
    try {
      for (let i = 0; i < 5000 && !c.closed; i++) {
        const id = 1 + 2 * i;
        c.headers(id, [[':method', 'GET'], [':scheme', 'http'], [':path', `/hold-rr-${i}`], [':authority', HOST]]);
        c.reset(id);
      }
      // node (nghttp2's reset-rate guard) closes the connection with GOAWAY.
      const goaway = await c.waitFor((f) => f.type === FRAME.GOAWAY, 20_000);
      assert.ok(goaway !== undefined || c.closed, 'the resetting connection is closed');
      const other = await curl(['--http2-prior-knowledge', '-H', `host: ${HOST}`, `${proxy.ingress}/after-rapid-reset`]);
      assert.equal(other.status, 200);
    } finally {
      c.close();
    }
    await waitFor(() => up.active === 0, 10_000, 'every reset stream is cancelled upstream');
    assert.ok(up.arrivals.length - arrivals < 5000, 'not every reset stream reached the upstream');
  });

  test('a stream the client resets is cancelled: the upstream request is aborted', async () => {
    const session = http2.connect(`${proxy.ingress}`);
    session.on('error', () => undefined);
    try {
      const active = up.active;
      const stream = session.request({ ':path': '/hold-cancel', ':authority': HOST });
      stream.on('error', () => undefined);
      await waitFor(() => up.active === active + 1, 5000, 'the request reaches the upstream');
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await waitFor(() => up.active === active, 5000, 'the upstream request is aborted');
    } finally {
      session.close();
    }
  });

  test('a worker that breaks mid-body: the HTTP/2 client sees its stream reset, never a complete response', async () => {
    const broken = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.destroy(), 20);
    });
    const script = ep.script;
    ep.script = () => routeTo(broken.address, '80');
    const session = http2.connect(`${proxy.ingress}`);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':path': '/broken', ':authority': HOST });
      stream.on('error', () => undefined);
      let body = '';
      stream.on('data', (d: Buffer) => (body += d.toString()));
      await new Promise((resolve) => stream.once('close', resolve));
      assert.equal(body, 'partial');
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR, 'a reset with NO_ERROR would read as a complete response');
    } finally {
      ep.script = script;
      session.close();
      await broken.close();
    }
  });

  test('drain: an HTTP/2 connection gets GOAWAY and its open stream still finishes', async () => {
    const draining = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--drain-timeout-ms', '10000'] });
    const session = http2.connect(`${draining.ingress}`);
    session.on('error', () => undefined);
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    const active = up.active;
    const stream = session.request({ ':path': '/hold-drain', ':authority': HOST });
    const response = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
    stream.resume();
    await waitFor(() => up.active === active + 1, 5000, 'the request reaches the upstream');
    const closed = draining.stop();
    await goaway;
    up.release();
    assert.equal(await response, 200);
    await closed;
    session.destroy();
  });
});
