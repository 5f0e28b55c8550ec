/**
 * End to end, a real proxy in the test's process: an upgrade, whatever listener and protocol it came on, is a
 * request of the one lifecycle — it reaches the worker with the same forwarding headers as a request on that
 * listener (an HTTPS listener's WebSocket says `x-forwarded-proto: https`), it is in flight while its tunnel is
 * open and timed when it closes, and every tunnel's access-log line names its upgrade and carries its tunnel
 * (bytes, who closed it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { actorHost } from '../../lib/testing/actors.js';
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { metricSum } from '../../lib/testing/scrape.js';
import { waitFor } from '../../lib/testing/wait.js';
import { boundAddress } from '../../lib/address.js';
import { getJson, routeTo, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';
import { connectH2, extendedConnect } from '../testing/h2-ws-client.js';
import type { ProxyStatsBlock } from '../ops/stats.js';

const HOST = actorHost('lifecycle');

/** A worker that switches every upgrade request to an echo of raw bytes, and remembers each handshake's headers. */
interface EchoWorker {
  readonly address: string;
  readonly handshakes: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startEchoWorker(): Promise<EchoWorker> {
  const handshakes: http.IncomingHttpHeaders[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.end('not an upgrade'));
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    handshakes.push(req.headers);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n');
    socket.on('data', (chunk: Buffer) => socket.write(chunk));
    socket.on('end', () => socket.end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    address: boundAddress(server),
    handshakes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let ca: TestCa;
let worker: EchoWorker;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('upgrades in the one request lifecycle', () => {
  before(async () => {
    ca = await createTestCa();
    const serving = await ca.issue('serving');
    worker = await startEchoWorker();
    ep = await startScriptedExtProc(() => routeTo(worker.address, '80'));
    proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      args: ['--actor-cache', 'off', '--tls-listen', '127.0.0.1:0', '--tls-cert', serving.certFile, '--tls-key', serving.keyFile],
    });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
    await worker?.close();
    await ca?.remove();
  });

  const HANDSHAKE = (id: string): string =>
    `GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nx-request-id: ${id}\r\n\r\n`;

  /** Sends a WebSocket handshake on `socket` and resolves with the response head once it arrived. */
  async function upgrade(socket: net.Socket, id: string): Promise<string> {
    socket.write(HANDSHAKE(id));
    let head = '';
    while (!head.includes('\r\n\r\n')) {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      head += chunk.toString('latin1');
    }
    return head;
  }

  async function echoed(socket: net.Socket, text: string): Promise<string> {
    socket.write(text);
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    return chunk.toString();
  }

  const stats = async (): Promise<ProxyStatsBlock> => (await getJson(`${proxy.admin}/stats`)) as unknown as ProxyStatsBlock;
  const accessLine = (id: string): Record<string, unknown> | undefined => proxy.logs().find((l) => l.msg === 'access' && l.requestId === id);
  /** Requests timed with the client's `protocol` (the cache is off: `cache="none"`). */
  const durationCount = async (protocol: 'http/1.1' | 'h2'): Promise<number> => {
    const res = await request(`${proxy.admin}/metrics`);
    return metricSum(await res.body.text(), `actor_edge_proxy_request_duration_seconds_count{cache="none",protocol="${protocol}"}`);
  };

  test('a WebSocket through the HTTPS listener reaches the worker with x-forwarded-proto: https', async () => {
    const address = proxy.addresses.tls as string;
    const socket = tls.connect({ host: '127.0.0.1', port: Number(address.slice(address.lastIndexOf(':') + 1)), servername: 'localhost', ca: [await readFile(ca.caFile)], ALPNProtocols: ['http/1.1'] });
    await once(socket, 'secureConnect');
    try {
      const head = await upgrade(socket, 'tls-ws');
      assert.match(head, /^HTTP\/1.1 101 /);
      assert.equal(await echoed(socket, 'over tls'), 'over tls');
      const seen = worker.handshakes.at(-1);
      assert.equal(seen?.['x-forwarded-proto'], 'https');
      assert.equal(seen?.['x-request-id'], 'tls-ws');
    } finally {
      socket.destroy();
    }
    await waitFor(() => accessLine('tls-ws') !== undefined, 5000, 'the tunnel to finish');
  });

  test('an open WebSocket is a request in flight; it is counted and timed once its tunnel closes', async () => {
    const before = await durationCount('http/1.1');
    const socket = net.connect(Number(proxy.address.slice(proxy.address.lastIndexOf(':') + 1)), '127.0.0.1');
    await once(socket, 'connect');
    const head = await upgrade(socket, 'h1-ws');
    assert.match(head, /^HTTP\/1.1 101 /);
    assert.equal(await echoed(socket, 'ping'), 'ping');
    assert.equal((await stats()).requests.inFlight, 1, 'in flight while the tunnel is open');
    assert.equal(await durationCount('http/1.1'), before, 'not timed before it finished');
    socket.end();
    await waitFor(() => accessLine('h1-ws') !== undefined, 5000, 'the access line');
    assert.equal((await stats()).requests.inFlight, 0);
    assert.equal(await durationCount('http/1.1'), before + 1, 'timed once, when its tunnel closed');
    const line = accessLine('h1-ws') as { status: number; upgrade: string; protocol: string; tunnel: { kind: string; bytesFromClient: number; bytesToClient: number; closedBy: string } };
    assert.equal(line.status, 101);
    assert.equal(line.upgrade, 'websocket');
    assert.equal(line.protocol, 'http/1.1');
    assert.equal(line.tunnel.kind, 'upgrade');
    assert.equal(line.tunnel.bytesFromClient, 4);
    assert.equal(line.tunnel.bytesToClient, 4);
    assert.equal(line.tunnel.closedBy, 'client');
  });

  test('a WebSocket over HTTP/2 gets the same access-log line: its upgrade, its tunnel, timed and counted', async () => {
    const before = await durationCount('h2');
    const session = await connectH2(proxy.ingress);
    try {
      const opened = await extendedConnect(session, HOST);
      assert.equal(opened.status, 200);
      opened.stream.write('h2 bytes');
      const [chunk] = (await once(opened.stream, 'data')) as [Buffer];
      assert.equal(chunk.toString(), 'h2 bytes');
      assert.equal((await stats()).requests.inFlight, 1);
      opened.stream.end();
      await waitFor(() => proxy.logs().some((l) => l.msg === 'access' && l.protocol === 'h2' && l.upgrade === 'websocket'), 5000, 'the access line');
    } finally {
      session.close();
    }
    const line = proxy.logs().find((l) => l.msg === 'access' && l.protocol === 'h2' && l.upgrade === 'websocket') as {
      status: number;
      tunnel: { kind: string; bytesFromClient: number; bytesToClient: number; closedBy: string };
    };
    assert.equal(line.status, 200);
    assert.equal(line.tunnel.kind, 'upgrade');
    assert.equal(line.tunnel.bytesFromClient, 8);
    assert.equal(line.tunnel.bytesToClient, 8);
    await waitFor(async () => (await stats()).requests.inFlight === 0, 5000, 'nothing in flight');
    assert.equal(await durationCount('h2'), before + 1);
  });
});
