/**
 * Where the proxy's ext_proc client used to differ from Envoy, against a scripted ext_proc gRPC server (the
 * project's protos) through the real proxy: each test is one difference, asserted as Envoy behaves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../../testing/proxy.js';
import { request } from 'undici';
import { actorHost } from '../../../lib/testing/actors.js';
import { routeTo, startScriptedExtProc,  startUpstream, type ScriptedExtProc, type Upstream } from '../../testing/helpers.js';
import type { ProcessingResponse } from './messages.js';

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
let allow: InProcessTestProxy;

describe('envoy-parity', () => {
  before(async () => {
    up = await startUpstream((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, method: req.method, headers: req.headers }));
    });
    ep = await startScriptedExtProc(() => routeTo(up.address));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-message-timeout-ms', '5000'] });
    allow = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-message-timeout-ms', '5000', '--failure-mode-allow'] });
  });

  after(async () => {
    await proxy.stop();
    await allow.stop();
    await ep.close();
    await up.close();
  });

  /** A route answer whose request-headers response carries `mutation`. */
  function routeWith(mutation: unknown): ProcessingResponse {
    const answer = routeTo(up.address) as unknown as { request_headers: { response: { header_mutation: unknown } } };
    answer.request_headers.response.header_mutation = mutation;
    return answer as unknown as ProcessingResponse;
  }

  async function send(p: { ingress: string }, script: ScriptedExtProc['script'], headers: Record<string, string> = {}) {
    ep.script = script;
    try {
      const res = await request(`${p.ingress}/orig?q=1`, { headers: { host: actorHost('a'), ...headers } });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    } finally {
      ep.script = () => routeTo(up.address);
    }
  }

  const upstreamSaw = (text: string) => JSON.parse(text) as { url: string; method: string; headers: Record<string, string> };

  test('1. a header both removed and set ends with the new value (Envoy removes first, then sets)', async () => {
    const r = await send(
      proxy,
      () => routeWith({ set_headers: [{ header: { key: 'x-replaced', raw_value: Buffer.from('new') } }], remove_headers: ['x-replaced'] }),
      { 'x-replaced': 'old' },
    );
    assert.equal(r.status, 200);
    assert.equal(upstreamSaw(r.text).headers['x-replaced'], 'new');
  });

  test('2. a :path rewrite reaches the upstream; one that is not origin-form is an error', async () => {
    const r = await send(proxy, () => routeWith({ set_headers: [{ header: { key: ':path', raw_value: Buffer.from('/rewritten?x=1') } }] }));
    assert.equal(r.status, 200);
    assert.equal(upstreamSaw(r.text).url, '/rewritten?x=1');
    const before = up.requests.length;
    const bad = await send(proxy, () => routeWith({ set_headers: [{ header: { key: ':path', raw_value: Buffer.from('http://elsewhere/') } }] }));
    assert.equal(bad.status, 500);
    assert.equal(up.requests.length, before, 'nothing was forwarded');
  });

  test('3. override_message_timeout is not the answer: without max_message_timeout it is ignored and the real answer is used', async () => {
    const r = await send(proxy, (_msg, call) => {
      call.write({ override_message_timeout: { seconds: 30, nanos: 0 } });
      return new Promise((resolve) => setTimeout(() => resolve(routeTo(up.address)), 50));
    });
    assert.equal(r.status, 200);
  });

  test('4. streamed_immediate_response to the request headers (body mode NONE) is a local reply, as Envoy >= 1.37 streams it', async () => {
    const streamed = (): ProcessingResponse => ({
      streamed_immediate_response: {
        headers_response: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('201') }, { key: 'x-local', raw_value: Buffer.from('yes') }] }, end_of_stream: true },
      },
    });
    const before = up.requests.length;
    for (const p of [proxy, allow]) {
      const r = await send(p, streamed);
      assert.equal(r.status, 201, 'not a spurious answer any more (it was 500)');
      assert.equal(r.headers['x-local'], 'yes');
      assert.equal(r.text, '');
    }
    assert.equal(up.requests.length, before, 'nothing was forwarded');
  });

  test('5. a header value given only in `value` is read as empty (Envoy >= 1.32 reads only raw_value)', async () => {
    const r = await send(proxy, () => routeWith({ set_headers: [{ header: { key: 'x-from-value', value: 'plain' } }] }));
    assert.equal(r.status, 200);
    assert.equal(upstreamSaw(r.text).headers['x-from-value'], '');
  });

  test('6. grpc_status becomes the grpc-status of a trailers-only answer, only for a gRPC request', async () => {
    const denied = (): ProcessingResponse => ({ immediate_response: { status: { code: 'Forbidden' }, grpc_status: { status: 7 }, body: Buffer.from('no') } });
    const plain = await send(proxy, denied);
    assert.equal(plain.status, 403);
    assert.equal(plain.headers['grpc-status'], undefined);
    for (const type of ['application/grpc', 'application/grpc+proto', 'application/grpc;charset=utf-8']) {
      const grpc = await send(proxy, denied, { 'content-type': type });
      assert.equal(grpc.status, 200, 'a gRPC client reads the status from grpc-status, as Envoy answers');
      assert.equal(grpc.headers['grpc-status'], '7', type);
      assert.equal(grpc.headers['grpc-message'], 'no', type);
    }
    const notGrpc = await send(proxy, denied, { 'content-type': 'application/grpc-web' });
    assert.equal(notGrpc.headers['grpc-status'], undefined);
  });
});
