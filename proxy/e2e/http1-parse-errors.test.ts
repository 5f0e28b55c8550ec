/**
 * End to end, a real proxy in the test's process: an HTTP/1.1 request gets exactly one answer, whatever node's
 * parser makes of what follows it. A request refused before its body was read keeps its connection when the body
 * can be skipped, and closes it without a second answer when it cannot; node's own answer to what it cannot parse
 * (431 for a head over 60 KiB) reaches the client over TLS too, rather than a reset. An expectation other than
 * 100-continue is ignored (no 417 of node's own before the body).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startScriptedRoute, type ScriptedRoute } from '../testing/edge-harness.js';
import { getJson, startUpstream, type Upstream } from '../testing/helpers.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';

const HOST = actorHost('parse');
const WITHIN_MS = 5000;

let ca: TestCa;
let caPem: Buffer;
let upstream: Upstream;
let route: ScriptedRoute<InProcessTestProxy>;
let proxy: InProcessTestProxy;

describe('one answer per HTTP/1.1 request, whatever follows it', () => {
  before(async () => {
    ca = await createTestCa();
    caPem = await readFile(ca.caFile);
    const serving = await ca.issue('serving');
    upstream = await startUpstream((_req, res) => res.end('ok'));
    route = await startScriptedRoute(upstream.address, ['--actor-cache', 'off', '--tls-listen', '127.0.0.1:0', '--tls-cert', serving.certFile, '--tls-key', serving.keyFile]);
    proxy = route.proxy;
  });

  after(async () => {
    await route?.close();
    await upstream?.close();
    await ca?.remove();
  });

  const portOf = (address: string | undefined): number => Number((address as string).slice((address as string).lastIndexOf(':') + 1));

  /** Writes `bytes` (then half-closes, if told) and returns what the proxy wrote until it closed the connection. */
  async function exchange(socket: net.Socket, bytes: string, halfClose: boolean): Promise<string> {
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.write(bytes);
    if (halfClose) socket.end();
    const closed = await Promise.race([once(socket, 'close').then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), WITHIN_MS).unref())]);
    socket.destroy();
    assert.ok(closed, 'the proxy closed the connection');
    return text;
  }

  async function plain(): Promise<net.Socket> {
    const s = net.connect(portOf(proxy.address), '127.0.0.1');
    await once(s, 'connect');
    return s;
  }

  async function settled(): Promise<void> {
    await waitFor(async () => ((await getJson(`${proxy.admin}/stats`)).requests as { inFlight: number }).inFlight === 0, WITHIN_MS, 'no request in flight');
  }

  const answers = (text: string): string[] => text.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];

  test('a request refused before its body, whose body cannot be parsed: one answer (duplicate Host), then the close', async () => {
    const head = `GET / HTTP/1.1\r\nHost: ${HOST}\r\nHost: ${HOST}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const text = await exchange(await plain(), `${head}1\r\na`, true); // the chunk never ends: the FIN cuts it
    assert.deepEqual(answers(text), ['HTTP/1.1 400 Bad Request']);
    assert.match(text, /duplicate Host header/);
    await settled();
  });

  test('a request refused before its body, whose body is whole: skipped, and the next request on the connection is served', async () => {
    const refused = `POST / HTTP/1.1\r\nHost: ${HOST}\r\nHost: ${HOST}\r\nContent-Length: 5\r\n\r\nhello`;
    const next = `GET / HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    const text = await exchange(await plain(), refused + next, false);
    assert.deepEqual(answers(text), ['HTTP/1.1 400 Bad Request', 'HTTP/1.1 200 OK']);
    await settled();
  });

  test('an expectation other than 100-continue is ignored: the request is served without it, one answer, even when its body is cut short', async () => {
    const before = upstream.requests.length;
    const served = await exchange(await plain(), `POST /x HTTP/1.1\r\nHost: ${HOST}\r\nExpect: foo\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`, false);
    assert.deepEqual(answers(served), ['HTTP/1.1 200 OK']);
    const got = upstream.requests.slice(before);
    assert.equal(got.length, 1);
    assert.equal(got[0]?.headers.expect, undefined, 'Expect is not forwarded');
    assert.equal(got[0]?.body.toString(), 'abc');
    // An empty expectation and a body the FIN cuts short: one answer, then the close (node's own 417 was followed by a 400).
    const cut = await exchange(await plain(), `GET / HTTP/1.1\r\nHost: ${HOST}\r\nExpect: \r\nContent-Length: 1\r\n\r\n`, true);
    assert.equal(answers(cut).length <= 1, true, `answers: ${JSON.stringify(answers(cut))}`);
    assert.doesNotMatch(cut, /417/);
    await settled();
  });

  async function overTls(): Promise<tls.TLSSocket> {
    const s = tls.connect({ host: '127.0.0.1', port: portOf(proxy.addresses.tls), servername: 'localhost', ca: [caPem], ALPNProtocols: ['http/1.1'] });
    await once(s, 'secureConnect');
    return s;
  }

  test('bytes after a request\'s Connection: close are not read: that request gets its own answer, over plain TCP and TLS, behind a 100 Continue too', async () => {
    const close = `GET /first HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    const next = `GET /second HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;
    const expecting = `GET /first HTTP/1.1\r\nHost: ${HOST}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
    for (const [name, bytes] of [['a request', close + next], ['garbage', `${close}XYZ\r\n\r\n`], ['behind a 100 Continue', expecting + next]] as const) {
      for (const connect of [plain, overTls]) {
        const before = upstream.requests.length;
        const text = await exchange(await connect(), bytes, false);
        const want = name === 'behind a 100 Continue' ? ['HTTP/1.1 100 Continue', 'HTTP/1.1 200 OK'] : ['HTTP/1.1 200 OK'];
        assert.deepEqual(answers(text), want, `${name} (${connect.name}): ${JSON.stringify(text.slice(0, 200))}`);
        assert.deepEqual(upstream.requests.slice(before).map((r) => r.url), ['/first'], `${name} (${connect.name})`);
      }
    }
    await settled();
  });

  test('an answer still queued when the parser fails on the next bytes is written before the close (TLS, behind a 100 Continue)', async () => {
    // Refused at once (two Host fields), after node's 100 Continue; then bytes no parser reads as a request.
    const refused = `GET / HTTP/1.1\r\nHost: ${HOST}\r\nHost: ${HOST}\r\nExpect: 100-continue\r\n\r\n`;
    for (const connect of [plain, overTls]) {
      const text = await exchange(await connect(), `${refused}\x01\x02 nonsense\r\n\r\n`, false);
      assert.deepEqual(answers(text), ['HTTP/1.1 100 Continue', 'HTTP/1.1 400 Bad Request'], `${connect.name}: ${JSON.stringify(text.slice(0, 200))}`);
      assert.match(text, /duplicate Host header/);
    }
    await settled();
  });

  test('a head over 60 KiB over TLS is answered 431, not reset', async () => {
    const s = await overTls();
    const text = await exchange(s, `GET / HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, false);
    assert.match(text, /^HTTP\/1\.1 431 /);
    assert.deepEqual(answers(text).length, 1);
  });
});
