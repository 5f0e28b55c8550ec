/**
 * End to end, a real proxy in front of a hostile worker: answers that RFC 9113 §8.2.2 says an intermediary must
 * clean before they reach an HTTP/2 client — a connection-specific field (`HTTP2-Settings`) in the trailers of a
 * chunked answer, in a plain response head, and in the 101 of an RFC 8441 WebSocket — are relayed without it, and
 * the proxy keeps serving everyone (its process used to exit, or end the stream with no response). The proxy runs
 * in the test's process: what would have ended its own — an exception or a rejection nobody handled — is recorded
 * here (and fails the test in node:test as well).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { once } from 'node:events';
import { actorHost } from '../../lib/testing/actors.js';
import { boundAddress } from '../../lib/address.js';
import { getJson, routeTo, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { connectH2, extendedConnect } from '../testing/h2-ws-client.js';

const HOST = actorHost('hostile');
const FIELD = 'HTTP2-Settings: AAMAAABkAAQAAP__\r\n';

/** A worker speaking raw HTTP/1.1, each path a hostile answer. */
async function startHostileWorker(): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      const path = head.slice(0, end).split(' ')[1] ?? '/';
      head = head.slice(end + 4);
      if (path === '/trailers') {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\ntrailer: x-fine, http2-settings\r\n\r\n5\r\nhello\r\n0\r\nx-fine: yes\r\n${FIELD}\r\n`);
      } else if (path === '/head') {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n${FIELD}\r\nok`);
      } else if (path === '/ws') {
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-accept: x\r\n${FIELD}\r\n`);
        socket.removeAllListeners('data');
        socket.on('data', (c: Buffer) => socket.write(c));
      } else {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 4\r\n\r\nfine');
      }
    });
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    address: boundAddress(server),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let worker: Awaited<ReturnType<typeof startHostileWorker>>;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
let session: http2.ClientHttp2Session;
/** Exceptions and rejections nobody handled, in this process (the proxy's). */
const uncaught: unknown[] = [];
process.on('uncaughtExceptionMonitor', (err) => uncaught.push(err));
process.on('unhandledRejection', (reason) => uncaught.push(reason));

before(async () => {
  worker = await startHostileWorker();
  ep = await startScriptedExtProc(() => routeTo(worker.address, '80'));
  proxy = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: ['--actor-cache', 'off'] });
  session = await connectH2(proxy.ingress);
});

after(async () => {
  session?.close();
  await proxy?.stop();
  await ep?.close();
  await worker?.close();
});

/** One HTTP/2 GET: status, headers, body and trailers. */
async function get(path: string): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string; trailers: http2.IncomingHttpHeaders }> {
  const stream = session.request({ ':path': path, ':authority': HOST });
  let trailers: http2.IncomingHttpHeaders = {};
  stream.on('trailers', (t) => (trailers = t));
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  let body = '';
  stream.setEncoding('utf8');
  for await (const c of stream) body += c as string;
  return { status: Number(headers[':status']), headers, body, trailers };
}

async function stillServing(): Promise<void> {
  const r = await get('/fine');
  assert.deepEqual([r.status, r.body], [200, 'fine'], 'the proxy still serves');
  const ready = await getJson(`${proxy.admin}/stats`);
  assert.ok(ready.requests !== undefined);
  assert.deepEqual(uncaught, [], 'nothing thrown that would have ended the proxy\'s process');
}

test('trailers carrying HTTP2-Settings reach an HTTP/2 client without it; the process keeps serving', async () => {
  const r = await get('/trailers');
  assert.equal(r.status, 200);
  assert.equal(r.body, 'hello');
  assert.equal(r.trailers['x-fine'], 'yes');
  assert.equal(r.trailers['http2-settings'], undefined);
  await stillServing();
});

test('a response head carrying HTTP2-Settings reaches an HTTP/2 client without it', async () => {
  const r = await get('/head');
  assert.deepEqual([r.status, r.body], [200, 'ok']);
  assert.equal(r.headers['http2-settings'], undefined);
  await stillServing();
});

test('a 101 carrying HTTP2-Settings on an RFC 8441 WebSocket opens the tunnel without it', async () => {
  const opened = await extendedConnect(session, HOST);
  assert.equal(opened.status, 200);
  assert.equal(opened.headers['http2-settings'], undefined);
  opened.stream.write('echo me');
  const [chunk] = (await once(opened.stream, 'data')) as [Buffer];
  assert.equal(chunk.toString(), 'echo me');
  opened.stream.close();
  await stillServing();
});
