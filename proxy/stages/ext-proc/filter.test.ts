/** The ext-proc filter against a scripted ext_proc gRPC server, through the real proxy in this process. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../../testing/proxy.js';
import { request } from 'undici';
import * as grpc from '@grpc/grpc-js';
import { freePort as freeClosedPort } from '../../../lib/loopback.js';
import { actorHost } from '../../../lib/testing/actors.js';
import { waitFor } from '../../../lib/testing/wait.js';
import {
  getJson,
  routeTo,
  startScriptedExtProc,
  
  startUpstream,
  type ScriptedExtProc,
  type Upstream,
} from '../../testing/helpers.js';
import { assembleStages } from '../assemble.js';
import { CONTINUE } from '../../api/filter.js';
import type { ProcessingResponse } from './messages.js';
import type { ProxyStatsBlock } from '../../ops/stats.js';

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
let allow: InProcessTestProxy;
let impatient: InProcessTestProxy;
let sendMode: InProcessTestProxy;
let routed: InProcessTestProxy;

const DEFAULT_SCRIPT = (): ProcessingResponse => routeTo(up.address);

describe('filter', () => {
  before(async () => {
    up = await startUpstream((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ headers: req.headers }));
    });
    ep = await startScriptedExtProc(DEFAULT_SCRIPT);
    // Every answer must come well within this, even on a loaded machine.
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-message-timeout-ms', '2000'] });
    // The timeout tests' proxies: they wait their message timeout out on purpose, and see no answer they must wait for.
    impatient = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-message-timeout-ms', '200'] });
    allow = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-message-timeout-ms', '200', '--failure-mode-allow'] });
    sendMode = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--extproc-processing-mode', 'response_header_mode=SEND'] });
    routed = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address], assemble: async (deps) => [
      { filter: { name: 'pre-routed', onRequest: (ctx) => ((ctx.route = { address: up.address, source: 'cache' }), CONTINUE) } },
      ...(await assembleStages(deps)),
    ] });
  });

  after(async () => {
    for (const p of [proxy, impatient, allow, sendMode, routed]) await p.stop();
    await ep.close();
    await up.close();
  });

  function withScript<T>(script: ScriptedExtProc['script'], fn: () => Promise<T>): Promise<T> {
    ep.script = script;
    return fn().finally(() => {
      ep.script = DEFAULT_SCRIPT;
    });
  }

  async function send(p: { ingress: string }, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
    const res = await request(`${p.ingress}/path?q=1`, {
      method: (opts.method ?? 'GET') as 'GET',
      headers: { host: actorHost('a'), 'X-Mixed-Case': 'v', ...opts.headers },
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async function stats(p: { admin: string }): Promise<ProxyStatsBlock> {
    return (await getJson(`${p.admin}/stats`)) as unknown as ProxyStatsBlock;
  }

  test('one stream per request, with the headers Envoy sends: pseudo-headers, lower case, raw_value, protocol_config', async () => {
    const seenBefore = ep.seen.length;
    const streamsBefore = ep.streams;
    const r = await send(proxy);
    assert.equal(r.status, 200);
    const post = await send(proxy, { method: 'POST', body: 'abc' });
    assert.equal(post.status, 200);
    assert.equal(ep.streams - streamsBefore, 2);
    const [get, withBody] = ep.seen.slice(seenBefore);
    assert.equal(get?.kind, 'request_headers');
    assert.equal(get?.headers[':authority'], actorHost('a'));
    assert.equal(get?.headers[':path'], '/path?q=1');
    assert.equal(get?.headers[':method'], 'GET');
    assert.equal(get?.headers[':scheme'], 'http');
    assert.equal(get?.headers['x-mixed-case'], 'v');
    assert.equal(get?.headers.host, undefined, 'host travels as :authority');
    assert.ok(get?.headers['x-request-id']);
    assert.deepEqual(get?.protocolConfig, { request_body_mode: 'NONE', response_body_mode: 'NONE', send_body_without_waiting_for_header_response: false });
    assert.equal(get?.endOfStream, true);
    assert.equal(withBody?.endOfStream, false);
    await waitFor(() => ep.active === 0, 2000, 'streams closed on the server');
    assert.equal((await stats(proxy)).extproc.active, 0);
  });

  test('header mutations: raw_value, overwrite by default, append when asked, removals; routing headers protected', async () => {
    const answer = routeTo(up.address) as { request_headers: { response: { header_mutation: unknown } } };
    answer.request_headers.response.header_mutation = {
      set_headers: [
        { header: { key: 'x-ate-target-port', raw_value: Buffer.from('8080') } },
        { header: { key: 'x-mixed-case', raw_value: Buffer.from('replaced') } },
        { header: { key: 'x-multi', raw_value: Buffer.from('one') } },
        { header: { key: 'x-multi', raw_value: Buffer.from('two') }, append: { value: true } },
        { header: { key: ':authority', raw_value: Buffer.from('evil.example') } },
        { header: { key: 'host', raw_value: Buffer.from('evil.example') } },
        { header: { key: 'x-envoy-original-dst-host', raw_value: Buffer.from('10.9.9.9:1') } },
      ],
      remove_headers: ['x-remove-me', 'host'],
    };
    const r = await withScript(() => answer as ProcessingResponse, () => send(proxy, { headers: { 'x-remove-me': '1' } }));
    assert.equal(r.status, 200);
    const h = JSON.parse(r.text).headers as Record<string, string>;
    assert.equal(h['x-ate-target-port'], '8080');
    assert.equal(h['x-mixed-case'], 'replaced');
    assert.equal(h['x-multi'], 'one, two');
    assert.equal(h['x-remove-me'], undefined);
    assert.equal(h.host, actorHost('a'));
    assert.equal(h['x-envoy-original-dst-host'], undefined);
  });

  test('a mutation with both value and raw_value is an error (500), as in Envoy', async () => {
    const answer = routeTo(up.address) as { request_headers: { response: { header_mutation: unknown } } };
    answer.request_headers.response.header_mutation = { set_headers: [{ header: { key: 'x-a', value: 'v', raw_value: Buffer.from('r') } }] };
    const r = await withScript(() => answer as ProcessingResponse, () => send(proxy));
    assert.equal(r.status, 500);
  });

  test('immediate responses reach the client as sent; status absent or below 200 becomes 200', async () => {
    const notFound: ProcessingResponse = {
      immediate_response: {
        status: { code: 'NotFound' },
        headers: { set_headers: [{ header: { key: 'content-type', raw_value: Buffer.from('text/plain') } }, { header: { key: 'x-ate-assignment-stale', raw_value: Buffer.from('true') } }] },
        body: Buffer.from('invalid host "x"'),
        details: 'invalid host',
      },
    };
    const r = await withScript(() => notFound, () => send(proxy));
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.text, 'invalid host "x"');
    assert.equal(r.headers['x-ate-assignment-stale'], undefined);
    const unavailable = await withScript(
      () => ({ immediate_response: { status: { code: 'ServiceUnavailable' }, body: Buffer.from('control plane down') } }),
      () => send(proxy),
    );
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.text, 'control plane down');
    const noStatus = await withScript(() => ({ immediate_response: { body: Buffer.from('hi') } }), () => send(proxy));
    assert.equal(noStatus.status, 200);
    const informational = await withScript(() => ({ immediate_response: { status: { code: 'Continue' } } }), () => send(proxy));
    assert.equal(informational.status, 200);
  });

  test('an immediate response to a gRPC request is a trailers-only gRPC answer: its grpc_status (0 when left out), else the HTTP status mapped', async () => {
    const grpc = { headers: { 'content-type': 'application/grpc' } };
    const withStatus = await withScript(
      () => ({ immediate_response: { status: { code: 'ServiceUnavailable' }, grpc_status: { status: 14 }, body: Buffer.from('down') } }),
      () => send(proxy, grpc),
    );
    assert.equal(withStatus.status, 200);
    assert.equal(withStatus.headers['grpc-status'], '14');
    assert.equal(withStatus.headers['grpc-message'], 'down');
    assert.equal(withStatus.text, '', 'no body: the status is the answer');
    const empty = await withScript(() => ({ immediate_response: { status: { code: 'Forbidden' }, grpc_status: {} } }), () => send(proxy, grpc));
    assert.equal(empty.status, 200);
    assert.equal(empty.headers['grpc-status'], '0');
    const none = await withScript(() => ({ immediate_response: { status: { code: 'Forbidden' } } }), () => send(proxy, grpc));
    assert.equal(none.headers['grpc-status'], '7', 'gRPC\'s mapping of 403: PERMISSION_DENIED');
  });

  test('a route that is not a literal ip:port → 503 "no healthy upstream"; no metadata → 503 too', async () => {
    const upBefore = up.requests.length;
    const named = await withScript(() => routeTo(`localhost:${up.address.split(':')[1]}`), () => send(proxy));
    assert.equal(named.status, 503);
    assert.equal(named.text, 'no healthy upstream\n');
    const none = await withScript(() => ({ request_headers: { response: { status: 'CONTINUE' } } }), () => send(proxy));
    assert.equal(none.status, 503);
    assert.equal(up.requests.length, upBefore);
  });

  test('a message timeout → 504, the stream is closed and counted', async () => {
    const before = await stats(impatient);
    const r = await withScript(() => 'ignore', () => send(impatient));
    assert.equal(r.status, 504);
    const after = await stats(impatient);
    assert.equal(after.extproc.timeouts - before.extproc.timeouts, 1);
    assert.equal(after.extproc.active, 0);
    await waitFor(() => ep.active === 0, 10_000, 'the server to see the stream closed');
  });

  test('a stream error → 500; the processor ending with OK → continue unprocessed (no route: 503)', async () => {
    const before = await stats(proxy);
    const failed = await withScript(() => 'fail', () => send(proxy));
    assert.equal(failed.status, 500);
    assert.equal((await stats(proxy)).extproc.errors - before.extproc.errors, 1);
    const ended = await withScript(() => 'end-ok', () => send(proxy));
    assert.equal(ended.status, 503);
  });

  test('--failure-mode-allow: errors and timeouts continue unprocessed, which has no route: 503', async () => {
    const t = await withScript(() => 'ignore', () => send(allow));
    assert.equal(t.status, 503);
    assert.equal(t.text, 'no healthy upstream\n');
    const e = await withScript(() => 'fail', () => send(allow));
    assert.equal(e.status, 503);
  });

  test('processing_mode response_header_mode=SEND: the upstream response headers go on the same stream, then it closes', async () => {
    const seenBefore = ep.seen.length;
    const r = await withScript(
      (m) => (m.kind === 'response_headers' ? { response_headers: { response: { status: 'CONTINUE' } } } : routeTo(up.address)),
      () => send(sendMode),
    );
    assert.equal(r.status, 200);
    await waitFor(() => ep.seen.length === seenBefore + 2, 10_000, 'the response_headers message');
    const resp = ep.seen[seenBefore + 1];
    assert.equal(resp?.kind, 'response_headers');
    assert.equal(resp?.headers[':status'], '200');
    assert.equal(resp?.headers['content-type'], 'application/json');
    await waitFor(async () => (await stats(sendMode)).extproc.active === 0 && ep.active === 0, 10_000, 'the stream to close');
  });

  test('a response head mutation that changes content-length → 500 (the upstream body is relayed as it is); the same value or a removal pass (fuzz seed 3)', async () => {
    const answering = (set: { key: string; raw: string }[], remove: string[] = []) => (m: { kind: string }): ProcessingResponse =>
      m.kind === 'response_headers'
        ? ({ response_headers: { response: { status: 'CONTINUE', header_mutation: { set_headers: set.map((h) => ({ header: { key: h.key, raw_value: Buffer.from(h.raw) } })), remove_headers: remove } } } } as ProcessingResponse)
        : routeTo(up.address);
    for (const raw of ['', '999', '0']) {
      const r = await withScript(answering([{ key: 'content-length', raw }]), () => send(sendMode));
      assert.equal(r.status, 500, `content-length ${JSON.stringify(raw)}`);
    }
    const plain = await withScript(answering([]), () => send(sendMode));
    assert.equal(plain.status, 200);
    const length = String(plain.headers['content-length']);
    const same = await withScript(answering([{ key: 'Content-Length', raw: length }]), () => send(sendMode));
    assert.equal(same.status, 200);
    assert.equal(same.text.length, Number(length));
    const removed = await withScript(answering([], ['content-length']), () => send(sendMode));
    assert.equal(removed.status, 200);
    assert.equal(removed.headers['content-length'], undefined);
    assert.ok(JSON.parse(removed.text).headers, 'the body is relayed whole');
  });

  test('a request that already has a route (a cache hit) opens no stream at all', async () => {
    const streamsBefore = ep.streams;
    const r = await send(routed);
    assert.equal(r.status, 200);
    assert.equal(ep.streams, streamsBefore);
    assert.equal((await stats(routed)).extproc.streams, 0);
  });

  test('ext_proc down → 500 fast; the proxy recovers when it comes back, without a restart', async () => {
    const port = await freeClosedPort();
    // The miss retries its stream within the re-run budget before its 500: a short one, so that is quick.
    const p = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', `127.0.0.1:${port}`, '--rerun-budget-ms', '300', '--connect-timeout-ms', '100'] });
    let back: ScriptedExtProc | undefined;
    try {
      const down = await send(p);
      assert.equal(down.status, 500);
      back = await startScriptedExtProc(() => routeTo(up.address), port);
      await waitFor(async () => (await send(p)).status === 200, 20_000, 'recovery');
    } finally {
      await p.stop();
      await back?.close();
    }
    void grpc;
  });
});
