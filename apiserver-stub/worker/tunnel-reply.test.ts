import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { TunnelReply, declaredLength, stripStale, type AppReply } from './tunnel-reply.js';

test('the stale header is removed in any letter case; other headers stay', () => {
  const headers = { 'X-Ate-Assignment-Stale': 'true', 'x-ate-assignment-stale': 'true', 'X-ATE-ASSIGNMENT-STALE': '1', 'content-type': 'text/plain', 'x-ate-assignment-stalex': 'kept' };
  assert.deepEqual(stripStale(headers), { 'content-type': 'text/plain', 'x-ate-assignment-stalex': 'kept' });
});

const FORGED = 'HTTP/1.1 421 Misdirected Request\r\nX-Ate-Assignment-Stale: true\r\ncontent-length: 0\r\n\r\n';

/** Serves every request with `app` through a TunnelReply; returns the port. */
async function serve(app: (reply: AppReply) => void): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => app(new TunnelReply(res)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A raw client connection: everything read so far, and waiting (with a deadline) for more or for the close. */
class RawConnection {
  text = '';
  closed = false;
  private readonly socket: net.Socket;
  private wake: (() => void) | undefined;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.text += d;
      this.wake?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    this.socket.on('error', () => undefined);
  }

  get(): void {
    this.socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
  }

  /** Resolves once `done()` holds; fails after 5 s. */
  async until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!done()) {
      if (Date.now() > deadline) assert.fail(`no ${what} within 5 s; read: ${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Sends one request on a new connection and reads until the server closes it. */
async function exchange(port: number): Promise<string> {
  const c = new RawConnection(port);
  try {
    c.get();
    await c.until(() => c.closed, 'close of the connection by the worker');
    return c.text;
  } finally {
    c.destroy();
  }
}

function statusLines(text: string): string[] {
  return text.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];
}

test('declaredLength: the Content-Length in any letter case, the smallest of several, none', () => {
  assert.equal(declaredLength({ 'Content-Length': 5 }), 5);
  assert.equal(declaredLength({ 'content-length': '7', 'CONTENT-LENGTH': '3' }), 3);
  assert.equal(declaredLength({ 'content-type': 'text/plain' }), undefined);
  assert.equal(declaredLength({ 'content-length': 'x' }), undefined);
});

test('an app writing past its Content-Length in end() cannot put a second response on the connection', async () => {
  const s = await serve((reply) => {
    reply.head(200, { 'content-type': 'text/plain', 'content-length': 5 });
    reply.end('hello' + FORGED);
  });
  try {
    const text = await exchange(s.port);
    assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK'], text);
    assert.ok(text.endsWith('\r\n\r\nhello'), text);
    assert.ok(!/x-ate-assignment-stale/i.test(text));
  } finally {
    await s.close();
  }
});

test('an app writing past its Content-Length over several writes is cut at the declared length', async () => {
  const s = await serve((reply) => {
    reply.head(200, { 'content-length': 5 });
    reply.write('hel');
    reply.write('lo' + FORGED);
    reply.write(FORGED);
    reply.end(FORGED);
  });
  try {
    const text = await exchange(s.port);
    assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK'], text);
    assert.ok(text.endsWith('\r\n\r\nhello'), text);
  } finally {
    await s.close();
  }
});

test('an app ending short of its Content-Length closes the connection (no desynchronised stream)', async () => {
  const s = await serve((reply) => {
    reply.head(200, { 'content-length': 10 });
    reply.end('short');
  });
  try {
    const text = await exchange(s.port);
    assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK'], text);
    assert.ok(text.endsWith('\r\n\r\nshort'), text);
  } finally {
    await s.close();
  }
});

test('a response that keeps to its Content-Length leaves the connection open for the next request', async () => {
  const s = await serve((reply) => {
    reply.head(200, { 'content-length': 5 });
    reply.write('he');
    reply.end('llo');
  });
  try {
    const c = new RawConnection(s.port);
    try {
      c.get();
      await c.until(() => c.text.endsWith('hello'), 'first response');
      c.get();
      await c.until(() => statusLines(c.text).length === 2 && c.text.endsWith('hello'), 'second response on the same connection');
      assert.equal(c.closed, false);
    } finally {
      c.destroy();
    }
  } finally {
    await s.close();
  }
});
