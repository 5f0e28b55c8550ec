import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { Destinations } from './destinations.js';

function exchange(address: string, payload: string): Promise<string> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(payload));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (text += c));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

test('each destination answers every request with its name, keeps the connection open until asked to close, and closes what is left when stopped', async () => {
  const d = await Destinations.start([{ host: '127.0.0.1', port: 0 }, { host: '127.0.0.2', port: 0 }]);
  try {
    assert.deepEqual(d.list.map((x) => x.name), ['destination-1', 'destination-2']);
    assert.match(d.addresses()['destination-2'] ?? '', /^127\.0\.0\.2:\d+$/);
    const [first, second] = d.list;
    const text = await exchange(first!.address, 'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 2, 'two answers on one connection');
    assert.ok(text.endsWith(`destination destination-1 ${first!.address}\n`));
    assert.match(await exchange(second!.address, 'GET / HTTP/1.0\r\n\r\n'), /destination destination-2/);
    // a client that never finishes its head is cut at the limit, and the server stays up
    assert.equal(await exchange(first!.address, 'x'.repeat(20_000)), '');
    const open = net.connect(Number(first!.address.split(':')[1]), '127.0.0.1');
    await new Promise((r) => open.once('connect', r));
    const ended = new Promise((r) => open.once('close', r));
    await d.close();
    await ended;
  } finally {
    await d.close();
  }
});

test('an address this host does not have fails the start, naming the destination, as a port in use does', async () => {
  // 192.0.2.0/24 is a documentation range: no interface has it.
  await assert.rejects(Destinations.start([{ host: '127.0.0.1', port: 0 }, { host: '192.0.2.1', port: 8000 }]), /^Error: destination-2: cannot listen on 192\.0\.2\.1:8000 \(not an address of this host\)$/);
  const taken = await Destinations.start([{ host: '127.0.0.1', port: 0 }]);
  try {
    const port = Number(taken.list[0]!.address.split(':')[1]);
    await assert.rejects(Destinations.start([{ host: '127.0.0.1', port }]), new RegExp(`destination-1: cannot listen on 127\\.0\\.0\\.1:${port} \\(the port is in use\\)`));
  } finally {
    await taken.close();
  }
});
