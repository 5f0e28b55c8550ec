/**
 * End to end, a real proxy in the test's process: an answer the proxy or ext_proc makes itself reaches a gRPC
 * client as a gRPC status — a trailers-only response (`:status` 200, `grpc-status`, `grpc-message`), as Envoy
 * answers — never an HTTP error page a gRPC client cannot read. A real grpc-js client reads the code and the
 * message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';
import { actorHost } from '../../lib/testing/actors.js';
import { startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import type { ProcessingResponse } from '../stages/ext-proc/messages.js';

const HOST = actorHost('grpc-errors');

let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('local answers to gRPC clients as gRPC statuses', () => {
  before(async () => {
    // By path: an immediate 403 (no gRPC status given), an immediate response carrying its own grpc_status, or no route.
    ep = await startScriptedExtProc((m) => {
      const path = m.headers[':path'];
      if (path === '/actoredge.demo.Echo/Echo') return { immediate_response: { status: { code: 'Forbidden' }, body: Buffer.from('not for you') } } as ProcessingResponse;
      if (path === '/actoredge.demo.Echo/Count') return { immediate_response: { status: { code: 'NotFound' }, grpc_status: { status: 5 }, body: Buffer.from('no such actor') } } as ProcessingResponse;
      return { request_headers: { response: { status: 'CONTINUE' } } } as ProcessingResponse;
    });
    proxy = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: ['--actor-cache', 'off'] });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
  });

  async function rawCall(path: string): Promise<{ headers: http2.IncomingHttpHeaders; body: number; endedWithHeaders: boolean }> {
    const session = http2.connect(proxy.ingress);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':method': 'POST', ':path': path, ':authority': HOST, 'content-type': 'application/grpc', te: 'trailers' });
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
      const [headers, flags] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders, number];
      let body = 0;
      for await (const c of stream) body += (c as Buffer).length;
      return { headers, body, endedWithHeaders: (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0 };
    } finally {
      session.close();
    }
  }

  test('an ext_proc immediate 403 reaches a gRPC client as trailers-only PERMISSION_DENIED with its text', async () => {
    const r = await rawCall('/actoredge.demo.Echo/Echo');
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.headers['content-type'], 'application/grpc');
    assert.equal(r.headers['grpc-status'], '7');
    assert.equal(r.headers['grpc-message'], 'not for you');
    assert.equal(r.body, 0);
    assert.ok(r.endedWithHeaders, 'trailers-only: the headers end the stream');
  });

  test('an immediate response\'s own grpc_status wins over the mapping of its HTTP status', async () => {
    const r = await rawCall('/actoredge.demo.Echo/Count');
    assert.equal(r.headers['grpc-status'], '5');
    assert.equal(r.headers['grpc-message'], 'no such actor');
  });

  test('a catalog error (no route) is UNAVAILABLE to a real grpc-js client, with the proxy\'s text', async () => {
    const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), 'actoredge.demo.Echo');
    const c = new Ctor(proxy.address, grpc.credentials.createInsecure(), { 'grpc.default_authority': HOST }) as unknown as {
      Fail(req: unknown, cb: (err: grpc.ServiceError | null) => void): void;
      close(): void;
    };
    try {
      const err = await new Promise<grpc.ServiceError | null>((resolve) => c.Fail({ code: 0, message: 'x' }, resolve));
      assert.ok(err !== null);
      assert.equal(err.code, grpc.status.UNAVAILABLE);
      assert.equal(err.details, 'no healthy upstream');
    } finally {
      c.close();
    }
  });
});
