/**
 * `streamed_immediate_response` as Envoy handles it. Against a fake client: where the protocol allows it (request
 * headers SEND, body mode NONE) it becomes a local reply whose body is read from the rest of the stream; with a
 * BUFFERED body, or in answer to the response headers, it is refused with the reason (500, or continue with
 * failure_mode_allow); a head without `:status` or a stream that starts with a body is a 500. Through the real
 * proxy and a scripted gRPC processor: the client receives each chunk as the processor sends it (HTTP/1.1 and
 * HTTP/2), trailers arrive as trailers, nothing reaches an upstream, and a stream that ends early resets the
 * client's response. A gRPC client (grpc-js) gets a streamed reply as the processor's own gRPC response, and a head
 * that ends the reply as a trailers-only gRPC status, like every other local reply to a gRPC request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { request } from 'undici';
import { actorHost } from '../../../lib/testing/actors.js';
import { waitFor } from '../../../lib/testing/wait.js';
import { isStreamedBody, type StreamedPiece } from '../../api/filter.js';
import { ChainResponse } from '../../chain/chain-response.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../../testing/proxy.js';
import { accessLine } from '../../testing/stack.js';
import { testRequest, type TestRequest } from '../../testing/proxy-request.js';
import type { MessageResult, ExtProcClient, ExtProcStream } from './client.js';
import { createExtProcFilter } from './filter.js';
import type { ProcessingResponse } from './messages.js';
import { defaultExtProcSettings } from './settings.js';

const raw = (text: string): Buffer => Buffer.from(text);
const head = (status: string | undefined, extra: Record<string, string> = {}, endOfStream = false): ProcessingResponse => ({
  streamed_immediate_response: {
    headers_response: {
      headers: { headers: [...(status === undefined ? [] : [{ key: ':status', raw_value: raw(status) }]), ...Object.entries(extra).map(([key, v]) => ({ key, raw_value: raw(v) }))] },
      end_of_stream: endOfStream,
    },
  },
});
const chunk = (text: string, endOfStream = false): ProcessingResponse => ({ streamed_immediate_response: { body_response: { body: raw(text), end_of_stream: endOfStream } } });
const trailers = (t: Record<string, string>): ProcessingResponse => ({
  streamed_immediate_response: { trailers_response: { headers: Object.entries(t).map(([key, v]) => ({ key, raw_value: raw(v) })) } },
});
const respond = (response: ProcessingResponse): MessageResult => ({ kind: 'response', response });

/** A client whose one stream answers round trips, then `receive`s, from scripts; records whether it was closed. */
function fakeClient(answers: MessageResult[], unasked: MessageResult[] = []) {
  const record = { closed: false, opened: 0 };
  const client: Pick<ExtProcClient, 'open'> = {
    open(): ExtProcStream {
      record.opened++;
      return {
        roundTrip: async () => answers.shift() ?? { kind: 'closed' },
        receive: async () => unasked.shift() ?? { kind: 'closed' },
        close: () => void (record.closed = true),
      };
    },
  };
  return { client, record };
}

function filterWith(client: Pick<ExtProcClient, 'open'>, o: { body?: 'NONE' | 'BUFFERED'; responseHeaders?: boolean; failureModeAllow?: boolean } = {}) {
  const base = defaultExtProcSettings();
  return createExtProcFilter({
    client,
    settings: defaultExtProcSettings({
      failureModeAllow: o.failureModeAllow ?? false,
      processingMode: { ...base.processingMode, requestBodyMode: o.body ?? 'NONE', responseHeaderMode: o.responseHeaders ? 'SEND' : 'SKIP' },
    }),
  });
}

const ctx = (): TestRequest => testRequest();

describe('streamed-reply', () => {
  test('request headers SEND, body mode NONE: a local reply with the head, whose body is the rest of the stream', async () => {
    const { client, record } = fakeClient([respond(head('206', { 'content-type': 'text/plain', 'x-from': 'processor' }))], [respond(chunk('one ')), respond(chunk('two')), respond(trailers({ 'x-sum': '7' }))]);
    const r = await filterWith(client).onRequest?.(ctx());
    assert.equal(r?.kind, 'reply');
    const reply = r?.kind === 'reply' ? r.reply : undefined;
    assert.equal(reply?.status, 206);
    assert.deepEqual(reply?.headers, { 'content-type': 'text/plain', 'x-from': 'processor' });
    assert.ok(isStreamedBody(reply?.body));
    assert.equal(record.closed, false, 'the stream stays open while the body is read');
    const pieces: StreamedPiece[] = [];
    const body = reply?.body;
    if (!isStreamedBody(body)) return;
    for (;;) {
      const p = await body.next();
      pieces.push(p);
      if (p.kind !== 'data') break;
    }
    assert.deepEqual(pieces.map((p) => (p.kind === 'data' ? Buffer.from(p.data).toString() : p)), ['one ', 'two', { kind: 'end', trailers: { 'x-sum': '7' } }]);
    body.cancel();
    assert.equal(record.closed, true);
  });

  test('a head with end_of_stream is the whole reply: no body, the stream closed', async () => {
    const { client, record } = fakeClient([respond(head('204', {}, true))]);
    const r = await filterWith(client).onRequest?.(ctx());
    assert.deepEqual(r, { kind: 'reply', reply: { status: 204, headers: {}, details: 'ext_proc streamed immediate response' } });
    assert.equal(record.closed, true);
  });

  test('body mode BUFFERED: refused with the reason (500), or with failure_mode_allow the request continues unprocessed', async () => {
    const strict = await filterWith(fakeClient([respond(head('200'))]).client, { body: 'BUFFERED' }).onRequest?.(ctx());
    assert.equal(strict?.kind === 'reply' && strict.reply.status, 500);
    assert.match(strict?.kind === 'reply' ? String(strict.reply.details) : '', /PROXY_ERR_EXTPROC_PROTOCOL: streamed_immediate_response needs request_body_mode NONE .*BUFFERED/);
    const c = ctx();
    const allowed = await filterWith(fakeClient([respond(head('200'))]).client, { body: 'BUFFERED', failureModeAllow: true }).onRequest?.(c);
    assert.deepEqual(allowed, { kind: 'continue' });
    assert.equal(c.route, undefined);
  });

  test('in answer to the response headers it is refused: 500 with the reason', async () => {
    const { client } = fakeClient([respond(routeTo('127.0.1.1:8443')), respond(head('200'))]);
    const c = ctx();
    const filter = filterWith(client, { responseHeaders: true });
    await filter.onRequest?.(c);
    const decision = await filter.onResponse?.(c, ChainResponse.upstream(200, []));
    assert.equal(decision?.kind === 'reply' && decision.reply.status, 500);
    assert.match(decision?.kind === 'reply' ? String(decision.reply.details) : '', /answers only the request headers, not response_headers/);
  });

  test('a malformed streamed response is a 500: no :status, a bad :status, or a body before the head', async () => {
    for (const [first, why] of [
      [head(undefined, { 'content-type': 'text/plain' }), /has no :status/],
      [head('99'), /invalid :status "99"/],
      [chunk('early'), /must start with headers_response/],
    ] as const) {
      const r = await filterWith(fakeClient([respond(first)]).client).onRequest?.(ctx());
      assert.equal(r?.kind === 'reply' && r.reply.status, 500);
      assert.match(r?.kind === 'reply' ? String(r.reply.details) : '', why);
    }
  });

  test('a stream that ends, fails or sends something else before the end is a broken body', async () => {
    for (const [unasked, why] of [
      [{ kind: 'closed' }, /ended the stream before the end/],
      [{ kind: 'error', code: 'INTERNAL', details: 'boom' }, /gRPC_error_INTERNAL\{boom\}/],
      [{ kind: 'timeout' }, /within the message timeout/],
      [respond(routeTo('127.0.1.1:8443')), /expected a body_response or trailers_response/],
    ] as const) {
      const r = await filterWith(fakeClient([respond(head('200'))], [unasked as MessageResult]).client).onRequest?.(ctx());
      const body = r?.kind === 'reply' ? r.reply.body : undefined;
      assert.ok(isStreamedBody(body));
      const p = await body.next();
      assert.equal(p.kind, 'error');
      assert.match(p.kind === 'error' ? p.details : '', why);
    }
  });

  // Through the real proxy (in process) and a scripted gRPC ext_proc processor.

  let ep: ScriptedExtProc;
  let up: Upstream;
  let proxy: InProcessTestProxy;
  /** Released by the test once the client has seen the first chunk (set by the processor's script). */
  let gate: (() => void) | undefined;

  before(async () => {
    up = await startUpstream((_req, res) => res.end('upstream'));
    ep = await startScriptedExtProc(() => routeTo(up.address));
    proxy = await startTestProxy({ extproc: ep.address, args: ['--actor-cache', 'off', '--extproc-message-timeout-ms', '5000'], mode: 'in-process' });
  });
  after(async () => {
    await proxy.stop();
    await ep.close();
    await up.close();
  });

  /** The processor streams a head and a chunk, waits for the gate, then the rest (`end`: how it ends). */
  function streamingScript(end: 'trailers' | 'eos' | 'abort'): ScriptedExtProc['script'] {
    gate = undefined;
    return (msg, call) => {
      if (msg.kind !== 'request_headers') return 'ignore';
      void (async () => {
        call.write(head('200', { 'content-type': 'text/plain' }));
        call.write(chunk('first;'));
        await new Promise<void>((resolve) => (gate = resolve));
        call.write(chunk('second;'));
        if (end === 'trailers') call.write(trailers({ 'x-checksum': 'abc' }));
        else if (end === 'eos') call.write(chunk('last', true));
        else call.end();
      })();
      return 'ignore';
    };
  }

  /** Opens the gate once the processor waits at it. */
  async function release(): Promise<void> {
    await waitFor(() => gate !== undefined, 5000, 'the processor to wait after its first chunk');
    gate?.();
  }

  test('HTTP/1.1: the client reads each chunk as the processor sends it, then the trailers; no upstream is asked', async () => {
    ep.script = streamingScript('trailers');
    const before = up.requests.length;
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-request-id': 'streamed-h1' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    const it = res.body[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(Buffer.from(first.value as Buffer).toString(), 'first;', 'the first chunk arrived before the processor sent the second');
    await release();
    let rest = '';
    for (let n = await it.next(); !n.done; n = await it.next()) rest += Buffer.from(n.value as Buffer).toString();
    assert.equal(rest, 'second;');
    assert.deepEqual(res.trailers, { 'x-checksum': 'abc' });
    assert.equal(up.requests.length, before, 'nothing was forwarded');
    const line = await accessLine(proxy, 'streamed-h1');
    assert.equal(line.status, 200);
    assert.equal(line.aborted, false, 'a complete streamed reply is not logged as cut off');
    assert.equal(line.bytesOut, 'first;second;'.length, 'its streamed bytes are counted');
  });

  test('HTTP/2 (h2c): the same stream, trailers as HTTP/2 trailers', async () => {
    ep.script = streamingScript('trailers');
    const session = http2.connect(proxy.ingress);
    try {
      const stream = session.request({ ':path': '/', ':authority': actorHost('a') });
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      assert.equal(headers[':status'], 200);
      assert.equal(headers['content-length'], undefined);
      const first = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
      assert.equal(first.toString(), 'first;');
      const trailersSeen = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('trailers', resolve));
      let rest = '';
      stream.on('data', (d: Buffer) => (rest += d.toString()));
      await release();
      assert.equal((await trailersSeen)['x-checksum'], 'abc');
      await new Promise((resolve) => stream.once('close', resolve));
      assert.equal(rest, 'second;');
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.close();
    }
  });

  test('end_of_stream on the last chunk ends the response', async () => {
    ep.script = streamingScript('eos');
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a') } });
    const text = res.body.text();
    await release();
    assert.equal(await text, 'first;second;last');
  });

  test('a processor that ends the stream before the end: the client response is cut off, never completed, and logged so', async () => {
    ep.script = streamingScript('abort');
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-request-id': 'streamed-broken' } });
    assert.equal(res.statusCode, 200);
    const text = res.body.text();
    await release();
    await assert.rejects(text, 'the body must not end as if it were complete');
    const line = await accessLine(proxy, 'streamed-broken');
    assert.equal(line.aborted, true);
    assert.match(String(line.details), /streamed reply broke: the processor ended the stream before the end of the response/);
  });

  test('HTTP/2: a processor that ends the stream early resets the client stream', async () => {
    ep.script = streamingScript('abort');
    const session = http2.connect(proxy.ingress);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':path': '/', ':authority': actorHost('a') });
      stream.on('error', () => undefined);
      stream.resume();
      await new Promise((resolve) => stream.once('response', resolve));
      await release();
      await new Promise((resolve) => stream.once('close', resolve));
      assert.notEqual(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR, 'the stream is reset, not ended');
    } finally {
      session.close();
    }
  });

  test('a client that goes away mid-body: the processor\'s stream is closed', async () => {
    ep.script = (msg, call) => {
      if (msg.kind !== 'request_headers') return 'ignore';
      call.write(head('200'));
      call.write(chunk('first;'));
      return 'ignore'; // and never more
    };
    const closedBefore = ep.closedByClient;
    const ac = new AbortController();
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-request-id': 'streamed-left' }, signal: ac.signal });
    const it = res.body[Symbol.asyncIterator]();
    assert.equal(Buffer.from((await it.next()).value as Buffer).toString(), 'first;');
    assert.equal(ep.closedByClient, closedBefore, 'the stream stays open while the reply streams');
    ac.abort();
    await waitFor(() => ep.closedByClient > closedBefore, 5000, 'the proxy to close the processor\'s stream');
    const line = await accessLine(proxy, 'streamed-left');
    assert.equal(line.aborted, true);
  });

  test('HEAD: the head only, at once, over HTTP/1.1 and HTTP/2; the processor\'s stream is closed', async () => {
    ep.script = streamingScript('eos');
    const closedBefore = ep.closedByClient;
    const h1 = await request(`${proxy.ingress}/`, { method: 'HEAD', headers: { host: actorHost('a'), 'x-request-id': 'streamed-head-h1' } });
    assert.equal(h1.statusCode, 200);
    assert.equal(await h1.body.text(), '');
    await waitFor(() => ep.closedByClient > closedBefore, 5000, 'the processor\'s stream to be closed');
    assert.equal((await accessLine(proxy, 'streamed-head-h1')).aborted, false);

    ep.script = streamingScript('eos');
    const session = http2.connect(proxy.ingress);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':method': 'HEAD', ':path': '/', ':authority': actorHost('a'), 'x-request-id': 'streamed-head-h2' });
      stream.on('error', () => undefined);
      let bytes = 0;
      stream.on('data', (d: Buffer) => (bytes += d.length));
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      assert.equal(headers[':status'], 200);
      await new Promise((resolve) => stream.once('close', resolve));
      assert.equal(bytes, 0);
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.close();
    }
    assert.equal((await accessLine(proxy, 'streamed-head-h2')).aborted, false);
  });

  /** One unary gRPC call through the proxy with grpc-js (raw bytes both ways): its answer or its status. */
  async function grpcCall(): Promise<{ kind: 'ok'; message: string } | { kind: 'status'; code: number; details: string }> {
    const client = new grpc.Client(new URL(proxy.ingress).host, grpc.credentials.createInsecure(), { 'grpc.default_authority': actorHost('a') });
    try {
      return await new Promise((resolve) => {
        client.makeUnaryRequest(
          '/demo.Echo/Say',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from('hello'),
          (err: grpc.ServiceError | null, value?: Buffer) =>
            resolve(err === null ? { kind: 'ok', message: String(value) } : { kind: 'status', code: err.code, details: err.details }),
        );
      });
    } finally {
      client.close();
    }
  }

  /** A gRPC length-prefixed message. */
  function grpcFrame(text: string): string {
    const payload = Buffer.from(text);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(payload.length, 1);
    return Buffer.concat([prefix, payload]).toString('latin1');
  }

  test('a gRPC request: a streamed reply is the processor\'s own gRPC response (messages, grpc-status trailers), not a trailers-only local reply', async () => {
    const before = up.requests.length;
    const script = (status: string, message: string): ScriptedExtProc['script'] => (msg, call) => {
      if (msg.kind !== 'request_headers') return 'ignore';
      call.write(head('200', { 'content-type': 'application/grpc' }));
      call.write({ streamed_immediate_response: { body_response: { body: Buffer.from(grpcFrame('streamed answer'), 'latin1'), end_of_stream: false } } });
      call.write(trailers({ 'grpc-status': status, 'grpc-message': message }));
      return 'ignore';
    };
    ep.script = script('0', '');
    assert.deepEqual(await grpcCall(), { kind: 'ok', message: 'streamed answer' });
    ep.script = script('5', 'no such greeting');
    assert.deepEqual(await grpcCall(), { kind: 'status', code: grpc.status.NOT_FOUND, details: 'no such greeting' }, 'the status from the streamed trailers');
    assert.equal(up.requests.length, before, 'nothing was forwarded');
    // On the wire: the processor's head as it made it (no grpc-status of the proxy's in it), the status in trailers.
    ep.script = script('0', '');
    const session = http2.connect(proxy.ingress);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/demo.Echo/Say', ':authority': actorHost('a'), 'content-type': 'application/grpc', te: 'trailers' });
      stream.end(Buffer.from(grpcFrame('hello'), 'latin1'));
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      const trailersSeen = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('trailers', resolve));
      let body = '';
      stream.on('data', (d: Buffer) => (body += d.toString('latin1')));
      assert.deepEqual([headers[':status'], headers['content-type'], headers['grpc-status']], [200, 'application/grpc', undefined]);
      assert.equal((await trailersSeen)['grpc-status'], '0');
      await new Promise((resolve) => stream.once('close', resolve));
      assert.equal(body, grpcFrame('streamed answer'));
    } finally {
      session.close();
    }
  });

  test('a gRPC request: a streamed head that ends the reply is a trailers-only gRPC status, with the processor\'s grpc-status and grpc-message', async () => {
    ep.script = (msg, call) => {
      if (msg.kind !== 'request_headers') return 'ignore';
      call.write(head('200', { 'content-type': 'application/grpc', 'grpc-status': '7', 'grpc-message': 'not for you' }, true));
      return 'ignore';
    };
    assert.deepEqual(await grpcCall(), { kind: 'status', code: grpc.status.PERMISSION_DENIED, details: 'not for you' });
    ep.script = (msg, call) => {
      if (msg.kind !== 'request_headers') return 'ignore';
      call.write(head('503', { 'content-type': 'text/plain' }, true));
      return 'ignore';
    };
    const mapped = await grpcCall();
    assert.equal(mapped.kind === 'status' ? mapped.code : mapped.kind, grpc.status.UNAVAILABLE, 'an HTTP status is mapped as Envoy maps it');
  });
});
