/**
 * WebSocket over HTTP/2 (RFC 8441): an HTTP/2 client reads any 2xx answer to its extended CONNECT as "tunnel
 * open". A worker that answers the handshake 200 without switching protocols must therefore never be relayed as
 * it is: the client gets 502 `PROXY_ERR_UPGRADE_NOT_ACCEPTED`. Over HTTP/1.1 the same 200 is relayed (a 1.1
 * client tells 101 from 200 itself).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import type { ClientHttp2Session } from 'node:http2';
import { routeTo, startScriptedExtProc,  type ScriptedExtProc } from '../testing/helpers.js';
import { connectH2, extendedConnect } from '../testing/h2-ws-client.js';
import { actorHost } from '../../lib/testing/actors.js';

let worker: http.Server;
let extproc: ScriptedExtProc;
let proxy: InProcessTestProxy;
let session: ClientHttp2Session;
let upgradesSeen = 0;

describe('an HTTP/2 WebSocket handshake the worker does not switch', () => {
  before(async () => {
    // A worker that ignores the upgrade: it answers every handshake with a plain 200.
    worker = http.createServer((_req, res) => res.end('not a websocket'));
    worker.on('upgrade', (_req: http.IncomingMessage, socket: net.Socket) => {
      upgradesSeen++;
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 15\r\nconnection: close\r\n\r\nnot a websocket');
    });
    worker.listen(0, '127.0.0.1');
    await once(worker, 'listening');
    const port = (worker.address() as net.AddressInfo).port;
    extproc = await startScriptedExtProc(() => routeTo(`127.0.0.1:${port}`, String(port)));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', extproc.address] });
    session = await connectH2(`${proxy.ingress}`);
  });

  after(async () => {
    session?.close();
    await proxy?.stop();
    await extproc?.close();
    worker?.close();
  });

  test('a worker answering an extended CONNECT with 200 (no switch) gives the HTTP/2 client 502, never a 2xx', async () => {
    const h = await extendedConnect(session, actorHost('plain-200'));
    let body = '';
    h.stream.setEncoding('utf8');
    h.stream.on('data', (c: string) => (body += c));
    await once(h.stream, 'end');
    assert.equal(upgradesSeen, 1, 'the handshake reached the worker as an HTTP/1.1 upgrade');
    assert.equal(h.status, 502);
    assert.match(body, /without switching protocols/);
  });
});
