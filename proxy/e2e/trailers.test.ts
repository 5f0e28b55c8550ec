/**
 * End to end: a plain node:http upstream that answers with HTTP/1.1 chunked trailers, a real proxy in
 * the test's process routed to it by a scripted ext_proc server, and a raw client that reads the
 * chunked body and its trailers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rawExchange } from '../testing/raw-exchange.js';
import { STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import {  routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

let upstream: Upstream;
let extproc: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('HTTP/1.1 trailers from a plain upstream', () => {
  before(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum, x-ate-assignment-stale' });
      res.write('hello ');
      res.write('world');
      res.addTrailers([
        ['X-Checksum', 'sha1-abc'],
        ['x-ate-assignment-stale', 'true'],
      ]);
      res.end();
    });
    extproc = await startScriptedExtProc(() => routeTo(upstream.address));
    proxy = await startTestProxy({ mode: 'in-process', extproc: extproc.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] });
  });

  after(async () => {
    await proxy?.stop();
    await extproc?.close();
    await upstream?.close();
  });

  interface Chunked {
    readonly head: string;
    readonly body: string;
    readonly trailers: Record<string, string>;
  }

  /** Splits a raw chunked HTTP/1.1 response into its head, its de-chunked body and its trailer fields. */
  function parseChunked(text: string): Chunked {
    const headEnd = text.indexOf('\r\n\r\n');
    const head = text.slice(0, headEnd);
    let at = headEnd + 4;
    let body = '';
    for (;;) {
      const lineEnd = text.indexOf('\r\n', at);
      assert.ok(lineEnd !== -1, `a complete chunked body: ${JSON.stringify(text)}`);
      const size = parseInt(text.slice(at, lineEnd), 16);
      at = lineEnd + 2;
      if (size === 0) break;
      body += text.slice(at, at + size);
      at += size + 2;
    }
    const trailers: Record<string, string> = {};
    const end = text.indexOf('\r\n\r\n', at - 2);
    assert.ok(end !== -1, 'the trailer section is terminated');
    for (const line of text.slice(at, end).split('\r\n')) {
      if (line === '') continue;
      trailers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    }
    return { head, body, trailers };
  }

  function headerOf(head: string, name: string): string | undefined {
    const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name}:`));
    return line?.slice(name.length + 1).trim();
  }

  const address = (): string => proxy.address;

  test("the worker's chunked trailers reach an HTTP/1.1 client, announced by Trailer; the stale signal never does", async () => {
    const text = (await rawExchange(address(), 'GET /t HTTP/1.1\r\nHost: a.example\r\nTE: trailers\r\nConnection: close\r\n\r\n')).raw;
    const r = parseChunked(text);
    assert.match(r.head, /^HTTP\/1\.1 200 /);
    assert.equal(headerOf(r.head, 'transfer-encoding'), 'chunked');
    assert.equal(headerOf(r.head, 'trailer'), 'x-checksum, x-ate-assignment-stale', "the worker's announcement is relayed");
    assert.equal(r.body, 'hello world');
    assert.deepEqual(r.trailers, { 'x-checksum': 'sha1-abc' });
  });

  test('a client that cannot receive trailers gets the body without them and without a Trailer header', async () => {
    const text = (await rawExchange(address(), 'GET /t HTTP/1.0\r\nHost: a.example\r\n\r\n')).raw;
    assert.match(text, /^HTTP\/1\.1 200 /);
    const [head = '', body] = text.split('\r\n\r\n');
    assert.equal(headerOf(head, 'trailer'), undefined);
    assert.equal(body, 'hello world');
  });
});
