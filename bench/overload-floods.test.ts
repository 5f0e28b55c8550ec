import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { coldStorm, floodTarget, slowlorisFlood, slowlorisHead, uploadFlood, retryAfterMs } from './overload-floods.js';

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

async function listen(server: net.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

test('floods go to http://127.0.0.1 only', () => {
  assert.deepEqual(floodTarget('http://127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  assert.throws(() => floodTarget('http://localhost:8080'), /127\.0\.0\.1 only/);
  assert.throws(() => floodTarget('http://10.0.0.1:8080'), /127\.0\.0\.1 only/);
  assert.throws(() => floodTarget('https://127.0.0.1:8443'), /127\.0\.0\.1 only/);
  assert.throws(() => uploadFlood('http://192.0.2.1:80', 1, ['a'], 1, 0), /127\.0\.0\.1 only/);
});

test('the slowloris head never ends: a request line, a Host, then headers', () => {
  const head = slowlorisHead('actor-0000.demo.example', 4096).toString('latin1');
  assert.equal(head.length, 4096);
  assert.ok(head.startsWith('GET /?slowloris=1 HTTP/1.1\r\nHost: actor-0000.demo.example\r\nx-slowloris-0: 0\r\n'));
  assert.ok(!head.includes('\r\n\r\n'), 'no blank line: the head is never complete');
});

test('cold storm: one request per host, answers counted by status and Retry-After, a close without answer as an error', async () => {
  // Answers by Host: 200, 503 with Retry-After, or the connection closed without an answer.
  const seen: string[] = [];
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const host = /\r\nHost: ([^\r]+)/.exec(head)?.[1] ?? '';
      seen.push(host);
      if (host.startsWith('gone')) socket.destroy();
      else if (host.startsWith('busy')) socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      else socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    });
  });
  const port = await listen(server);
  try {
    const hosts = ['a-1', 'a-2', 'a-3', 'busy-1', 'busy-2', 'gone-1'];
    const storm = coldStorm({ host: '127.0.0.1', port }, hosts);
    await storm.established;
    await storm.finished;
    const out = await storm.stop();
    assert.deepEqual(seen.sort(), [...hosts].sort(), 'every host asked once');
    assert.equal(out.kind, 'cold');
    assert.deepEqual([out.planned, out.attempted, out.connected, out.requests], [6, 6, 6, 6]);
    assert.deepEqual(out.statusCounts, { '200': 3, '503': 2 });
    assert.equal(out.retryAfter, 2);
    assert.deepEqual(out.errors, { closed: 1 });
    assert.deepEqual(out.connectErrors, {});
    assert.equal(out.inFlightAtEnd, 0);
    assert.equal(out.answerMs !== undefined && out.answerMs.p50 <= out.answerMs.max, true);
  } finally {
    server.close();
  }
});

test('cold storm: a refused connection is a connect error', async () => {
  const server = net.createServer();
  const port = await listen(server);
  server.close(); // nothing listens on the port any more
  await once(server, 'close');
  const storm = coldStorm({ host: '127.0.0.1', port }, ['a', 'b']);
  await storm.finished;
  const out = await storm.stop();
  assert.deepEqual(out.connectErrors, { ECONNREFUSED: 2 });
  assert.deepEqual([out.attempted, out.connected, out.requests], [2, 0, 0]);
});

test('slowloris: every connection receives the head a byte at a time, and the stop closes them all', async () => {
  const received = new Map<net.Socket, string>();
  const closed: net.Socket[] = [];
  const server = net.createServer((socket) => {
    received.set(socket, '');
    socket.on('data', (chunk) => received.set(socket, received.get(socket) + chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => closed.push(socket));
  });
  const port = await listen(server);
  try {
    const flood = slowlorisFlood({ host: '127.0.0.1', port }, 5, 'actor.example');
    await flood.established;
    await until(() => received.size === 5 && [...received.values()].every((s) => s.length >= 2));
    const out = await flood.stop();
    const head = slowlorisHead('actor.example').toString('latin1');
    for (const s of received.values()) assert.ok(head.startsWith(s), 'a prefix of the head, in order');
    assert.deepEqual([out.connected, out.openAtEnd, out.closedByProxy], [5, 5, 0]);
    assert.ok(out.bytesSent >= 10);
    assert.deepEqual(out.statusCounts, {});
    await until(() => closed.length === 5);
  } finally {
    server.close();
  }
});

test('uploads: each uploader POSTs its body again once answered; the stop is no error', async () => {
  let requests = 0;
  const lengths = new Set<number>();
  const server = http.createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => {
      requests++;
      lengths.add(n);
      assert.match(req.url ?? '', /^\/upload\?delay_ms=7$/);
      res.end('ok');
    });
  });
  const port = await listen(server);
  try {
    const flood = uploadFlood(`http://127.0.0.1:${port}`, 3, ['h1', 'h2'], 4096, 7);
    await flood.established;
    await until(() => requests >= 9);
    const out = await flood.stop();
    assert.deepEqual([...lengths], [4096]);
    assert.ok((out.statusCounts['200'] ?? 0) >= 6, JSON.stringify(out));
    assert.ok(out.requests >= (out.statusCounts['200'] ?? 0));
    assert.deepEqual(out.errors, {}, 'uploads cut short by the stop are in flight, not errors');
    assert.deepEqual(out.connectErrors, {});
    assert.ok(out.connected >= 1 && out.connected === out.attempted, 'every connection the pool tried opened');
  } finally {
    server.close();
    server.closeAllConnections();
  }
});

test('an upload refused with Retry-After waits that many seconds (at most 60); without one, the 100 ms an error waits', () => {
  assert.equal(retryAfterMs('1'), 1000);
  assert.equal(retryAfterMs(['2', '5']), 2000);
  assert.equal(retryAfterMs('0'), 0);
  assert.equal(retryAfterMs('3600'), 60_000);
  assert.equal(retryAfterMs(undefined), 100);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT'), 100);
});
