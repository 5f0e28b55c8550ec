/**
 * End to end (`--misdirected-421 on`): on a TLS connection opened for one actor (its SNI), a request for another
 * actor — an HTTP/2 client coalescing connections under one wildcard certificate, an HTTP/1.1 Host that is not the
 * SNI, or a WebSocket handshake of either — is answered 421 before any filter runs: no ext_proc stream, nothing
 * sent upstream, no stale header. The same request on a connection of its own is served; a client that sent no SNI
 * is served; a request inside a CONNECT tunnel over TLS (whose SNI names the proxy, not an actor) is served; without
 * the flag the coalesced request is served.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { actorHost } from '../../lib/testing/actors.js';
import { STALE_HEADER } from '../../lib/wire-contract.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';
import { extendedConnect } from '../testing/h2-ws-client.js';

const A = actorHost('sni-a');
const B = actorHost('sni-b');
let ca: TestCa;
let up: Upstream;
/** WebSocket handshakes that reached the worker. */
let handshakes = 0;
let ep: ScriptedExtProc;
let strict: InProcessTestProxy;
let lenient: InProcessTestProxy;

describe('misdirected requests (421)', () => {
  before(async () => {
    ca = await createTestCa();
    const { certFile, keyFile } = await ca.issue('serving');
    up = await startUpstream((_req, res) => res.end('ok'));
    up.server.on('upgrade', (_req, socket: Socket) => {
      handshakes++;
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n');
    });
    ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
    const tlsArgs = ['--tls-listen', '127.0.0.1:0', '--tls-cert', certFile, '--tls-key', keyFile];
    // The cache off: every request that runs the chain opens an ext_proc stream, so "no stream" means "no filter ran".
    const args = ['--actor-cache', 'off', ...tlsArgs];
    strict = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...args, '--misdirected-421', 'on', '--connect-tls-listen', '127.0.0.1:0'] });
    lenient = await startTestProxy({ mode: 'in-process', extproc: ep.address, args });
  });

  after(async () => {
    await strict?.stop();
    await lenient?.stop();
    await ep?.close();
    await up?.close();
    await ca?.remove();
  });

  const portOf = (address: string | undefined): number => Number((address as string).slice((address as string).lastIndexOf(':') + 1));
  const port = (p: InProcessTestProxy): number => portOf(p.addresses.tls);

  interface H2Answer {
    readonly status: number;
    readonly headers: http2.IncomingHttpHeaders;
    readonly text: string;
  }

  function h2Get(session: http2.ClientHttp2Session, authority: string): Promise<H2Answer> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'GET', ':path': '/', ':authority': authority });
      let text = '';
      let headers: http2.IncomingHttpHeaders = {};
      stream.setEncoding('utf8');
      stream.on('response', (h) => (headers = h));
      stream.on('data', (c: string) => (text += c));
      stream.on('end', () => resolve({ status: Number(headers[':status']), headers, text }));
      stream.on('error', reject);
    });
  }

  function h2Session(p: InProcessTestProxy, servername: string): Promise<http2.ClientHttp2Session> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(`https://127.0.0.1:${port(p)}`, { servername, rejectUnauthorized: false });
      session.once('remoteSettings', () => resolve(session));
      session.once('error', reject);
    });
  }

  /** Runs `use` on an HTTP/2 connection to `p`'s HTTPS listener opened for `servername`, closed afterwards. */
  async function onSession<T>(p: InProcessTestProxy, servername: string, use: (session: http2.ClientHttp2Session) => Promise<T>): Promise<T> {
    const session = await h2Session(p, servername);
    try {
      return await use(session);
    } finally {
      session.close();
    }
  }

  function h1Get(p: InProcessTestProxy, host: string, servername: string | undefined): Promise<{ status: number; text: string; stale: unknown }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port: port(p), path: '/', headers: { host }, rejectUnauthorized: false, agent: false, ...(servername === undefined ? {} : { servername }) },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, stale: res.headers[STALE_HEADER] }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** A TLS connection (ALPN http/1.1) for `servername`, whose bytes are kept as they arrive. */
  class TlsClient {
    #received = '';
    #wake: (() => void) | undefined;

    private constructor(readonly socket: tls.TLSSocket) {
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => {
        this.#received += c;
        this.#wake?.();
      });
    }

    static async open(tlsPort: number, servername: string): Promise<TlsClient> {
      const socket = tls.connect({ host: '127.0.0.1', port: tlsPort, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
      await once(socket, 'secureConnect');
      return new TlsClient(socket);
    }

    /** Writes `request` and resolves with the next answer: its head and (when it announces one) its body. */
    async exchange(request: string): Promise<string> {
      this.socket.write(request);
      for (;;) {
        const end = this.#received.indexOf('\r\n\r\n');
        if (end !== -1) {
          const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(this.#received.slice(0, end))?.[1] ?? 0);
          if (this.#received.length >= end + 4 + length) {
            const answer = this.#received.slice(0, end + 4 + length);
            this.#received = this.#received.slice(answer.length);
            return answer;
          }
        }
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    }

    close(): void {
      this.socket.destroy();
    }
  }

  const HANDSHAKE = (host: string): string =>
    `GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';

  test('HTTP/2 coalescing: another actor on a connection opened for A is answered 421 before any filter; on its own connection it is served', async () => {
    await onSession(strict, A, async (session) => {
      assert.equal((await h2Get(session, A)).status, 200);
      const streams = ep.streams;
      const forwarded = up.requests.length;
      const misdirected = await h2Get(session, B);
      assert.equal(misdirected.status, 421);
      assert.equal(misdirected.text, 'misdirected request: open a connection for this authority\n');
      assert.equal(misdirected.headers[STALE_HEADER], undefined, 'the client-facing 421 never carries the worker stale signal');
      assert.equal(ep.streams, streams, 'no ext_proc stream for a misdirected request');
      assert.equal(up.requests.length, forwarded, 'nothing forwarded upstream');
      // The same connection still serves its own authority (with a port, in any case).
      assert.equal((await h2Get(session, `${A.toUpperCase()}:443`)).status, 200);
    });
    const retried = await onSession(strict, B, (own) => h2Get(own, B));
    assert.deepEqual([retried.status, retried.text], [200, 'ok']);
  });

  test('HTTP/1.1 over TLS: a Host that is not the SNI is 421; no SNI (connected by address) is served', async () => {
    const wrong = await h1Get(strict, B, A);
    assert.equal(wrong.status, 421);
    assert.equal(wrong.stale, undefined);
    assert.equal((await h1Get(strict, A, A)).status, 200);
    // node sends no SNI for an IP address servername (RFC 6066 forbids it): the client chose no replica by name.
    assert.equal((await h1Get(strict, B, undefined)).status, 200);
  });

  test('a WebSocket handshake over TLS for another actor than the SNI is 421 and never reaches the worker; for the SNI it is served', async () => {
    const streams = ep.streams;
    const before = handshakes;
    const wrong = await TlsClient.open(port(strict), A);
    try {
      const answer = await wrong.exchange(HANDSHAKE(B));
      assert.match(answer, /^HTTP\/1.1 421 /);
      assert.match(answer, /misdirected request: open a connection for this authority\n$/);
      assert.doesNotMatch(answer, new RegExp(STALE_HEADER, 'i'));
    } finally {
      wrong.close();
    }
    assert.equal(ep.streams, streams, 'no ext_proc stream for a misdirected handshake');
    assert.equal(handshakes, before, 'the handshake never reached the worker');
    const own = await TlsClient.open(port(strict), B);
    try {
      assert.match(await own.exchange(HANDSHAKE(B)), /^HTTP\/1.1 101 /);
    } finally {
      own.close();
    }
    assert.equal(handshakes, before + 1);
  });

  test('WebSocket over HTTP/2 (extended CONNECT) on a connection opened for A: another actor is 421, A is served', async () => {
    await onSession(strict, A, async (session) => {
      const before = handshakes;
      const wrong = await extendedConnect(session, B);
      wrong.stream.close();
      assert.equal(wrong.status, 421);
      assert.equal(handshakes, before);
      const own = await extendedConnect(session, A);
      own.stream.close();
      assert.equal(own.status, 200);
      assert.equal(handshakes, before + 1);
    });
  });

  test('inside a CONNECT tunnel over TLS (its SNI names the proxy) every actor is served', async () => {
    const socket = await TlsClient.open(portOf(strict.addresses.connectTls), 'localhost');
    try {
      assert.match(await socket.exchange(`CONNECT ${A}:80 HTTP/1.1\r\nHost: ${A}:80\r\n\r\n`), /^HTTP\/1.1 200 /);
      const answer = await socket.exchange(`GET / HTTP/1.1\r\nHost: ${A}\r\n\r\n`);
      assert.match(answer, /^HTTP\/1.1 200 /);
      assert.match(answer, /\r\n\r\nok$/);
    } finally {
      socket.close();
    }
  });

  test('without --misdirected-421 the coalesced request is served', async () => {
    const answer = await onSession(lenient, A, (session) => h2Get(session, B));
    assert.deepEqual([answer.status, answer.text], [200, 'ok']);
  });
});
