/**
 * End to end, a real proxy in the test's process: an HTTP/1.1 request gets exactly one answer, whatever node's
 * parser makes of what follows it. A request refused before its body was read keeps its connection when the body
 * can be skipped, and closes it without a second answer when it cannot; node's own answer to what it cannot parse
 * (431 for a head over 60 KiB) reaches the client over TLS too, rather than a reset.
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

  test('a head over 60 KiB over TLS is answered 431, not reset', async () => {
    const s = tls.connect({ host: '127.0.0.1', port: portOf(proxy.addresses.tls), servername: 'localhost', ca: [caPem], ALPNProtocols: ['http/1.1'] });
    await once(s, 'secureConnect');
    const text = await exchange(s, `GET / HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, false);
    assert.match(text, /^HTTP\/1\.1 431 /);
    assert.deepEqual(answers(text).length, 1);
  });
});
