/**
 * End to end, a real proxy in the test's process with short timeouts: every listener (plain, HTTPS, CONNECT, TLS
 * CONNECT) and every protocol (HTTP/1.1, HTTP/2, an upgrade) answers or closes a client that stalls in the
 * handshake, the head or the body — within the configured timeouts, and the proxy goes on serving. And a WebSocket
 * client's half-close is passed on: the worker's answer after the client's FIN still reaches the client.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { actorHost } from '../../lib/testing/actors.js';

import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';

const HOST = actorHost('slow');
/** Short, so each stall is waited out quickly; a normal head, handshake or request is still done far within them. */
const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;
/** Generous: every stall must end well within this, however loaded the machine. */
const WITHIN_MS = 15_000;

let ca: TestCa;
let caPem: Buffer;
let upstream: Upstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('slow clients on every listener', () => {
  before(async () => {
    ca = await createTestCa();
    caPem = await readFile(ca.caFile);
    const serving = await ca.issue('serving');
    upstream = await startUpstream((_req, res) => res.end('ok'));
    upstream.server.on('upgrade', (_req: http.IncomingMessage, socket: net.Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      let got = '';
      socket.on('data', (c: Buffer) => (got += c.toString()));
      // Answers only after the client's FIN: the answer must still reach the client.
      socket.once('end', () => socket.end(`after your FIN: ${got}`));
    });
    ep = await startScriptedExtProc(() => routeTo(upstream.address, '80'));
    proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      args: [
        '--actor-cache', 'off',
        '--headers-timeout-ms', String(HEADERS_TIMEOUT_MS),
        '--request-timeout-ms', String(REQUEST_TIMEOUT_MS),
        '--tls-listen', '127.0.0.1:0', '--tls-cert', serving.certFile, '--tls-key', serving.keyFile,
        '--connect-listen', '127.0.0.1:0',
        '--connect-tls-listen', '127.0.0.1:0',
      ],
    });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
    await upstream?.close();
    await ca?.remove();
  });

  const portOf = (address: string | undefined): number => Number((address as string).slice((address as string).lastIndexOf(':') + 1));

  /** What the server wrote until it closed the connection, and how long that took (bounded by WITHIN_MS). */
  async function untilClosed(socket: net.Socket): Promise<{ text: string; closed: boolean }> {
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = await Promise.race([
      once(socket, 'close').then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), WITHIN_MS).unref()),
    ]);
    socket.destroy();
    return { text, closed };
  }

  async function plain(port: number): Promise<net.Socket> {
    const s = net.connect(port, '127.0.0.1');
    await once(s, 'connect');
    return s;
  }

  async function secure(port: number): Promise<tls.TLSSocket> {
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: [caPem], ALPNProtocols: ['http/1.1'] });
    await once(s, 'secureConnect');
    return s;
  }

  async function stillServing(): Promise<void> {
    const res = await fetch(`${proxy.ingress}/ok`, { headers: { host: HOST } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
  }

  // Side by side: each test stalls its own connection and waits for the proxy's timeout, and none reads a counter.
  describe('slow clients', { concurrency: true }, () => {
    test('plain listener: a connection that sends nothing is closed', async () => {
      const r = await untilClosed(await plain(portOf(proxy.address)));
      assert.ok(r.closed, 'closed');
      assert.equal(r.text, '');
      await stillServing();
    });

    test('plain listener, HTTP/1.1: half a request head is answered 408', async () => {
      const s = await plain(portOf(proxy.address));
      s.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\nX-Slow: `);
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1.1 408/);
    });

    test('plain listener, HTTP/1.1: a body that trickles in is answered 408 within the request timeout', async () => {
      const s = await plain(portOf(proxy.address));
      s.write(`POST / HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 100\r\n\r\n`);
      const drip = setInterval(() => s.writable && s.write('x'), 250);
      const r = await untilClosed(s);
      clearInterval(drip);
      assert.ok(r.closed);
      assert.match(r.text, /HTTP\/1.1 408/);
      await stillServing();
    });

    test('plain listener, an upgrade: half a WebSocket handshake head is answered 408', async () => {
      const s = await plain(portOf(proxy.address));
      s.write(`GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-`);
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1.1 408/);
    });

    test('HTTP/2: a POST body that trickles in one byte every 250 ms gets 408 within the request timeout', async () => {
      const session = http2.connect(proxy.ingress);
      session.on('error', () => undefined);
      const stream = session.request({ ':method': 'POST', ':path': '/drip', ':authority': HOST, 'content-length': '100' }, { endStream: false });
      stream.on('error', () => undefined);
      const drip = setInterval(() => stream.writable && stream.write('x'), 250);
      let deadline: NodeJS.Timeout | undefined;
      try {
        const [headers] = (await Promise.race([once(stream, 'response'), new Promise((_, reject) => (deadline = setTimeout(() => reject(new Error('no answer in time')), WITHIN_MS)))])) as [http2.IncomingHttpHeaders];
        assert.equal(headers[':status'], 408);
        // The answer is complete: the proxy ends the stream (RST_STREAM NO_ERROR) though the client is still sending.
        clearTimeout(deadline);
        stream.resume(); // node's client stream closes once its body was read
        if (!stream.closed) await Promise.race([once(stream, 'close'), new Promise((_, reject) => (deadline = setTimeout(() => reject(new Error('the stream stayed open')), WITHIN_MS)))]);
        assert.equal(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      } finally {
        clearTimeout(deadline); // or it would keep this file's process alive for the rest of WITHIN_MS
        clearInterval(drip);
        session.destroy();
      }
      await stillServing();
    });

    test('HTTP/2: a connection that trickles in a HEADERS frame, one byte every 150 ms, is closed', async () => {
      const s = await plain(portOf(proxy.address));
      s.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      s.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])); // an empty SETTINGS frame
      s.write(Buffer.from([0, 0, 64, 1, 4, 0, 0, 0, 1])); // HEADERS, 64 bytes announced, END_HEADERS, stream 1
      const drip = setInterval(() => s.writable && s.write(Buffer.from([0x82])), 150);
      const r = await untilClosed(s);
      clearInterval(drip);
      assert.ok(r.closed, 'the trickling connection is closed');
      await stillServing();
    });

    test('HTTPS listener: a connection that sends nothing, and one that sends half a ClientHello, are closed', async () => {
      const silent = await untilClosed(await plain(portOf(proxy.addresses.tls)));
      assert.ok(silent.closed, 'the silent connection is closed');
      const half = await plain(portOf(proxy.addresses.tls));
      half.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])); // a ClientHello's first bytes
      assert.ok((await untilClosed(half)).closed, 'the half handshake is closed');
      await stillServing();
    });

    test('HTTPS listener: half a request head over TLS is answered 408', async () => {
      const s = await secure(portOf(proxy.addresses.tls));
      s.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\nX-Slow: `);
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1.1 408/);
    });

    test('CONNECT listener: half a CONNECT head is answered 408', async () => {
      const s = await plain(portOf(proxy.addresses.connect));
      s.write(`CONNECT ${HOST}:80 HTTP/1.1\r\nHost: `);
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1.1 408/);
    });

    test('TLS CONNECT listener: a silent connection is closed; half a CONNECT head over TLS is answered 408', async () => {
      const silent = await untilClosed(await plain(portOf(proxy.addresses.connectTls)));
      assert.ok(silent.closed, 'the silent connection is closed');
      const s = await secure(portOf(proxy.addresses.connectTls));
      s.write(`CONNECT ${HOST}:80 HTTP/1.1\r\nHost: `);
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(r.text, /^HTTP\/1.1 408/);
      await stillServing();
    });

    test('a WebSocket client\'s half-close is passed on: the worker\'s answer after the FIN still arrives', async () => {
      const s = await plain(portOf(proxy.address));
      s.write(`GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
      let text = '';
      s.on('data', (c: Buffer) => (text += c.toString('latin1')));
      while (!text.includes('\r\n\r\n')) await once(s, 'data');
      assert.match(text, /^HTTP\/1.1 101/);
      s.end('question'); // the client's FIN right after its last bytes
      const r = await untilClosed(s);
      assert.ok(r.closed);
      assert.match(text + r.text, /after your FIN: question$/);
    });
  });
});
