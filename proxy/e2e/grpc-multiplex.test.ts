/**
 * End to end, a real proxy in the test's process: gRPC calls to one worker run concurrently on its HTTP/2
 * session. The worker answers no call until ten are open at once (a proxy that sends them one at a time never
 * gets there), and one client's open streaming call never holds back another call to the same worker. A call that
 * waits for the worker longer than the route timeout gets its 504.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type ServerHttp2Stream } from 'node:http2';
import { once } from 'node:events';
import { actorHost } from '../../lib/testing/actors.js';
import { boundAddress } from '../../lib/address.js';
import { routeTo, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

const HOST = actorHost('grpc-mux');
const GRPC = { 'content-type': 'application/grpc', te: 'trailers' };

/** A length-prefixed gRPC message. */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

interface Worker {
  readonly address: string;
  open: number;
  maxOpen: number;
  /** Streams waiting for `/gate` calls to reach this many. */
  gate: number;
  close(): Promise<void>;
}

/** A gRPC worker on h2c: `/gate` calls are answered once `gate` of them are open; `/hold` stays open until the client ends; anything else at once. */
async function startWorker(): Promise<Worker> {
  const waiting: ServerHttp2Stream[] = [];
  const server = http2.createServer();
  const w: Worker = {
    address: '',
    open: 0,
    maxOpen: 0,
    gate: 10,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const answer = (stream: ServerHttp2Stream, text: string): void => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame(text));
  };
  server.on('stream', (stream, headers) => {
    w.open++;
    w.maxOpen = Math.max(w.maxOpen, w.open);
    stream.once('close', () => w.open--);
    stream.on('error', () => undefined);
    const path = headers[':path'];
    if (path === '/demo.Echo/Gate') {
      stream.resume();
      waiting.push(stream);
      if (waiting.length >= w.gate) for (const s of waiting.splice(0)) answer(s, 'released');
    } else if (path === '/demo.Echo/Hold') {
      stream.on('data', () => undefined);
      stream.once('end', () => answer(stream, 'held'));
    } else {
      stream.resume();
      stream.once('end', () => answer(stream, 'quick'));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(w, { address: boundAddress(server) });
}

let worker: Worker;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
let client: http2.ClientHttp2Session;

describe('concurrent gRPC calls on one HTTP/2 session', () => {
  before(async () => {
    worker = await startWorker();
    ep = await startScriptedExtProc(() => routeTo(worker.address, '80'));
    // Every call the worker answers is answered well within it; the one it never answers waits it out.
    proxy = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: ['--route-timeout-ms', '1000'] });
    client = http2.connect(proxy.ingress);
    client.on('error', () => undefined);
    // The actor's binding is learned first: the calls below are cache hits, none waits for another's miss.
    const warm = await call('/demo.Echo/Quick', { body: frame('warm') });
    assert.equal((await warm.done).text, 'quick');
  });

  after(async () => {
    client?.close();
    await proxy?.stop();
    await ep?.close();
    await worker?.close();
  });

  /** One call: the response status, the grpc-status trailer, and the messages' text. */
  async function call(path: string, opts: { body?: Buffer; keepOpen?: boolean } = {}): Promise<{ stream: http2.ClientHttp2Stream; done: Promise<{ status: number; grpcStatus: string | undefined; text: string }> }> {
    const stream = client.request({ ':method': 'POST', ':path': path, ':authority': HOST, ...GRPC }, { endStream: false });
    stream.on('error', () => undefined);
    if (opts.body !== undefined) stream.write(opts.body);
    if (opts.keepOpen !== true) stream.end();
    const done = (async () => {
      let grpcStatus: string | undefined;
      stream.on('trailers', (t) => (grpcStatus = t['grpc-status'] as string | undefined));
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      grpcStatus ??= headers['grpc-status'] as string | undefined;
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c as Buffer);
      const all = Buffer.concat(chunks);
      return { status: Number(headers[':status']), grpcStatus, text: all.length > 5 ? all.subarray(5).toString() : '' };
    })();
    return { stream, done };
  }

  test('ten concurrent calls to one worker are open at the worker at once (it answers none before all ten arrived)', async () => {
    worker.gate = 10;
    const calls = await Promise.all(Array.from({ length: 10 }, () => call('/demo.Echo/Gate', { body: frame('hi') })));
    const results = await Promise.all(calls.map((c) => c.done));
    for (const r of results) assert.deepEqual(r, { status: 200, grpcStatus: '0', text: 'released' });
    assert.ok(worker.maxOpen >= 10, `the worker saw ${worker.maxOpen} calls open at once`);
  });

  test('a client\'s open streaming call does not hold back another call to the same worker', async () => {
    const held = await call('/demo.Echo/Hold', { body: frame('part one'), keepOpen: true });
    const quick = await call('/demo.Echo/Quick', { body: frame('x') });
    assert.deepEqual(await quick.done, { status: 200, grpcStatus: '0', text: 'quick' }, 'answered while the streaming call is still open');
    held.stream.end(frame('part two'));
    assert.deepEqual(await held.done, { status: 200, grpcStatus: '0', text: 'held' });
  });

  test('a call the worker never answers gets the route timeout (UNAVAILABLE to a gRPC client), while the session keeps serving', async () => {
    worker.gate = 1000; // never reached: the call waits
    const stuck = await call('/demo.Echo/Gate', { body: frame('stuck') });
    const r = await stuck.done;
    assert.deepEqual([r.status, r.grpcStatus], [200, '14'], 'the 504 as gRPC answers it: trailers-only, UNAVAILABLE');
    const quick = await call('/demo.Echo/Quick', { body: frame('x') });
    assert.equal((await quick.done).text, 'quick');
  });
});
