/** Telling HTTP/1.1 from h2c by the first bytes, and what happens to a connection that sends none. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { waitFor } from './testing/wait.js';
import { HTTP2_PREFACE, protocolOf, sniffProtocol, type WireProtocol } from './preface-sniff.js';

test('the first four bytes decide', () => {
  const rows: [string | Buffer, WireProtocol | undefined][] = [
    ['', undefined],
    ['PR', undefined],
    ['PRI ', 'h2'],
    [HTTP2_PREFACE, 'h2'],
    ['GET / HTTP/1.1\r\n', 'http/1.1'],
    ['PUT ', 'http/1.1'],
    ['P', undefined],
  ];
  for (const [head, protocol] of rows) assert.equal(protocolOf(Buffer.from(head)), protocol, JSON.stringify(String(head)));
});

/** A server sniffing each connection with `timeoutMs`: what was dispatched, and the server-side sockets. */
async function sniffing(timeoutMs: number): Promise<{ server: net.Server; port: number; dispatched: WireProtocol[]; sockets: net.Socket[] }> {
  const dispatched: WireProtocol[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.push(socket);
    sniffProtocol(socket, timeoutMs, (p) => dispatched.push(p));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, dispatched, sockets };
}

test('a client that connects and ends its side without a byte (a TCP health check) is closed at once, not at the timeout', async () => {
  const s = await sniffing(60_000);
  try {
    const client = net.connect({ host: '127.0.0.1', port: s.port, allowHalfOpen: true });
    await once(client, 'connect');
    client.end();
    await once(client, 'close'); // the server closed its side too: well before the 60 s timeout
    assert.deepEqual(s.dispatched, []);
    assert.equal(s.sockets[0]?.destroyed, true);
  } finally {
    s.server.close();
  }
});

test('the bytes read are put back for the engine, and the protocol dispatched', async () => {
  const s = await sniffing(60_000);
  try {
    const client = net.connect({ host: '127.0.0.1', port: s.port });
    await once(client, 'connect');
    client.write('GET / HTTP/1.1\r\n');
    await waitFor(() => s.dispatched.length > 0, 5000, 'the protocol dispatched');
    assert.deepEqual(s.dispatched, ['http/1.1']);
    const socket = s.sockets[0] as net.Socket;
    socket.resume();
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    assert.equal(chunk.toString(), 'GET / HTTP/1.1\r\n');
    client.destroy();
  } finally {
    s.server.close();
  }
});
