/**
 * The ext-proc stage's Envoy settings, end to end against a scripted ext_proc gRPC server through the real proxy:
 * processing modes (buffered request body, response headers applied before the head is written), mode override,
 * max_message_timeout, request attributes, metadata namespaces, mutation and forward rules, per-host overrides,
 * and failure_mode_allow once the body was sent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../../testing/proxy.js';
import { request } from 'undici';
import { actorHost } from '../../../lib/testing/actors.js';
import { routeTo, startScriptedExtProc,  startUpstream, type ScriptedExtProc, type SeenMessage, type Upstream } from '../../testing/helpers.js';
import type { ProcessingResponse } from './messages.js';

type Proxy = InProcessTestProxy;

let ep: ScriptedExtProc;
let up: Upstream;
const proxies: Proxy[] = [];

const ORIGINAL_DST = 'envoy.filters.listener.original_dst';
const route = (): ProcessingResponse => routeTo(up.address);

describe('settings-features', () => {
  before(async () => {
    up = await startUpstream((req, res, body) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-upstream', 'yes');
      res.end(JSON.stringify({ url: req.url, headers: req.headers, body: body.toString() }));
    });
    ep = await startScriptedExtProc(route);
  });

  after(async () => {
    for (const p of proxies) await p.stop();
    await ep.close();
    await up.close();
  });

  async function proxyWith(...args: string[]): Promise<Proxy> {
    const p = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, ...args] });
    proxies.push(p);
    return p;
  }

  async function send(
    p: Proxy,
    script: ScriptedExtProc['script'],
    opts: { host?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; headers: Record<string, unknown>; text: string; seen: SeenMessage[] }> {
    ep.script = script;
    const from = ep.seen.length;
    try {
      const res = await request(`${p.ingress}/p?q=1`, {
        method: opts.body === undefined ? 'GET' : 'POST',
        headers: { host: opts.host ?? actorHost('a'), ...opts.headers },
        ...(opts.body !== undefined ? { body: opts.body } : {}),
      });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text(), seen: ep.seen.slice(from) };
    } finally {
      ep.script = route;
    }
  }

  const common = (kind: string, response: Record<string, unknown>, extra: Record<string, unknown> = {}): ProcessingResponse =>
    ({ [kind]: { response }, ...extra }) as unknown as ProcessingResponse;
  const metadataOf = (ns: Record<string, Record<string, string>>) => ({
    fields: Object.fromEntries(
      Object.entries(ns).map(([name, fields]) => [
        name,
        { structValue: { fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])) } },
      ]),
    ),
  });
  const routeMetadata = () => metadataOf({ [ORIGINAL_DST]: { local: up.address } });

  test('processing_mode request_body_mode=BUFFERED: the processor sees the whole body and may replace it; over the limit → 413', async () => {
    const p = await proxyWith('--extproc-processing-mode', 'request_body_mode=BUFFERED', '--max-replay-body-bytes', '64');
    const r = await send(
      p,
      (m) =>
        m.kind === 'request_headers'
          ? common('request_headers', { status: 'CONTINUE' })
          : common(
              'request_body',
              {
                header_mutation: { set_headers: [{ header: { key: 'content-length', raw_value: Buffer.from('7') } }] },
                body_mutation: { body: Buffer.from('changed') },
              },
              { dynamic_metadata: routeMetadata() },
            ),
      { body: 'hello' },
    );
    assert.equal(r.status, 200);
    assert.deepEqual(r.seen.map((m) => m.kind), ['request_headers', 'request_body']);
    assert.equal(r.seen[0]?.endOfStream, false);
    assert.deepEqual(r.seen[0]?.protocolConfig, { request_body_mode: 'BUFFERED', response_body_mode: 'NONE', send_body_without_waiting_for_header_response: false });
    const body = r.seen[1]?.raw.request_body as { body: Buffer; end_of_stream: boolean };
    assert.equal(body.body.toString(), 'hello');
    assert.equal(body.end_of_stream, true);
    assert.equal(JSON.parse(r.text).body, 'changed');

    const big = await send(p, route, { body: 'x'.repeat(100) });
    assert.equal(big.status, 413);
    const noBody = await send(p, route);
    assert.equal(noBody.status, 200);
    assert.deepEqual(noBody.seen.map((m) => m.kind), ['request_headers'], 'a request without a body sends none');
  });

  test('processing_mode request_header_mode=SKIP: the body is the first message (with protocol_config)', async () => {
    const p = await proxyWith('--extproc-processing-mode', 'request_header_mode=SKIP,request_body_mode=BUFFERED');
    const r = await send(p, () => common('request_body', {}, { dynamic_metadata: routeMetadata() }), { body: 'abc' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.seen.map((m) => m.kind), ['request_body']);
    assert.ok(r.seen[0]?.protocolConfig);
    const none = await send(p, route);
    assert.equal(none.status, 503, 'no body, headers skipped: no stream, no route');
    assert.equal(none.seen.length, 0);
  });

  test('failure_mode_allow never fails open once the processor was sent the body', async () => {
    const p = await proxyWith('--failure-mode-allow', '--extproc-processing-mode', 'request_body_mode=BUFFERED');
    const r = await send(p, (m) => (m.kind === 'request_headers' ? route() : 'fail'), { body: 'abc' });
    assert.equal(r.status, 500);
    const headersOnly = await send(p, () => 'fail');
    assert.equal(headersOnly.status, 503, 'before the body: fail open (then no route)');
  });

  test('response_header_mode SEND: mutations (and :status) apply before the response head is written', async () => {
    const p = await proxyWith('--extproc-processing-mode', 'response_header_mode=SEND');
    const r = await send(p, (m) =>
      m.kind === 'request_headers'
        ? route()
        : common('response_headers', {
            header_mutation: {
              set_headers: [
                { header: { key: 'x-added', raw_value: Buffer.from('1') } },
                { header: { key: ':status', raw_value: Buffer.from('201') } },
              ],
              remove_headers: ['x-upstream'],
            },
          }),
    );
    assert.equal(r.status, 201);
    assert.equal(r.headers['x-added'], '1');
    assert.equal(r.headers['x-upstream'], undefined);
    assert.equal(JSON.parse(r.text).url, '/p?q=1', 'the body is relayed after the head');
    const seenResponse = r.seen[1];
    assert.equal(seenResponse?.kind, 'response_headers');
    assert.equal(seenResponse?.headers[':status'], '200');
    assert.equal(seenResponse?.headers['x-upstream'], 'yes');

    const denied = await send(p, (m) =>
      m.kind === 'request_headers' ? route() : ({ immediate_response: { status: { code: 'Forbidden' }, body: Buffer.from('denied') } } as ProcessingResponse),
    );
    assert.equal(denied.status, 403);
    assert.equal(denied.text, 'denied');
    const failed = await send(p, (m) => (m.kind === 'request_headers' ? route() : 'fail'));
    assert.equal(failed.status, 500);
  });

  test('allow_mode_override: a mode_override on the headers answer turns on the response headers; without it, ignored', async () => {
    const withOverride = (): ProcessingResponse => ({ ...route(), mode_override: { response_header_mode: 'SEND' } }) as ProcessingResponse;
    const answer = (m: SeenMessage): ProcessingResponse => (m.kind === 'request_headers' ? withOverride() : common('response_headers', {}));
    const allowed = await send(await proxyWith('--extproc-allow-mode-override'), answer);
    assert.equal(allowed.status, 200);
    assert.deepEqual(allowed.seen.map((m) => m.kind), ['request_headers', 'response_headers']);
    const ignored = await send(await proxyWith(), answer);
    assert.equal(ignored.status, 200);
    assert.deepEqual(ignored.seen.map((m) => m.kind), ['request_headers']);
  });

  test('max_message_timeout: override_message_timeout extends the wait up to the maximum; without one the timeout holds', async () => {
    // The answer comes twice the message timeout late; the override, at once.
    const slow: ScriptedExtProc['script'] = (_m, call) => {
      call.write({ override_message_timeout: { seconds: 30, nanos: 0 } });
      return new Promise((resolve) => setTimeout(() => resolve(route()), 600));
    };
    const extended = await send(await proxyWith('--extproc-message-timeout-ms', '300', '--extproc-max-message-timeout-ms', '60000'), slow);
    assert.equal(extended.status, 200);
    const capped = await send(await proxyWith('--extproc-message-timeout-ms', '300'), slow);
    assert.equal(capped.status, 504);
  });

  test('request_attributes go on the first message under envoy.filters.http.ext_proc', async () => {
    const p = await proxyWith('--extproc-request-attributes', 'request.path,request.method,request.url_path,source.address,connection.id,connection.mtls');
    const r = await send(p, route);
    assert.equal(r.status, 200);
    const attrs = (r.seen[0]?.raw.attributes as Record<string, { fields: Record<string, Record<string, unknown>> }>)['envoy.filters.http.ext_proc']?.fields;
    assert.equal(attrs?.['request.path']?.stringValue, '/p?q=1');
    assert.equal(attrs?.['request.url_path']?.stringValue, '/p');
    assert.equal(attrs?.['request.method']?.stringValue, 'GET');
    assert.match(String(attrs?.['source.address']?.stringValue), /^127\.0\.0\.1:\d+$/);
    assert.equal(typeof attrs?.['connection.id']?.numberValue, 'number');
    assert.equal(attrs?.['connection.mtls']?.boolValue, false);
  });

  test('metadata_options: only receiving namespaces are kept; forwarding namespaces go back in metadata_context', async () => {
    const p = await proxyWith('--extproc-processing-mode', 'response_header_mode=SEND', '--extproc-receiving-namespaces', 'ns.a', '--extproc-forwarding-namespaces', 'ns.a,ns.b');
    const r = await send(p, (m) =>
      m.kind === 'request_headers'
        ? ({ ...route(), dynamic_metadata: metadataOf({ [ORIGINAL_DST]: { local: up.address }, 'ns.a': { k: 'a' }, 'ns.b': { k: 'b' } }) } as ProcessingResponse)
        : common('response_headers', {}),
    );
    assert.equal(r.status, 200);
    const first = r.seen[0]?.raw.metadata_context as { filter_metadata: Record<string, unknown> };
    assert.deepEqual(first.filter_metadata, {}, 'metadata_context is always sent, empty at first');
    const second = r.seen[1]?.raw.metadata_context as { filter_metadata: Record<string, { fields: Record<string, { stringValue: string }> }> };
    assert.deepEqual(Object.keys(second.filter_metadata), ['ns.a']);
    assert.equal(second.filter_metadata['ns.a']?.fields.k?.stringValue, 'a');
  });

  test('mutation_rules: allow_envoy, disallow_expression and disallow_is_error; :authority stays refused', async () => {
    const set = (key: string) => routeWithHeaders([{ header: { key, raw_value: Buffer.from('v') } }]);
    const lenient = await proxyWith('--extproc-mutation-rules', 'allow_envoy', '--extproc-mutation-disallow-expression', '^x-secret');
    const envoy = await send(lenient, () => set('x-envoy-note'));
    assert.equal(JSON.parse(envoy.text).headers['x-envoy-note'], 'v');
    const secret = await send(lenient, () => set('x-secret-thing'));
    assert.equal(secret.status, 200);
    assert.equal(JSON.parse(secret.text).headers['x-secret-thing'], undefined, 'refused and ignored');
    const authority = await send(await proxyWith('--extproc-mutation-rules', 'allow_all_routing'), () => set(':authority'));
    assert.equal(JSON.parse(authority.text).headers.host, actorHost('a'));
    const strict = await proxyWith('--extproc-mutation-rules', 'disallow_is_error');
    assert.equal((await send(strict, () => set('x-envoy-note'))).status, 500);
    assert.equal((await send(strict, () => set(':authority'))).status, 500);
    const method = () => routeWithHeaders([{ header: { key: ':method', raw_value: Buffer.from('PUT') } }]);
    assert.equal((await send(await proxyWith('--extproc-mutation-rules', 'allow_all_routing'), method)).status, 200);
    assert.equal(up.requests.at(-1)?.method, 'PUT', 'allow_all_routing lets :method change');
    assert.equal((await send(lenient, method)).status, 200);
    assert.equal(up.requests.at(-1)?.method, 'GET', 'by default :method is refused');
  });

  function routeWithHeaders(set_headers: unknown[]): ProcessingResponse {
    const answer = route() as unknown as { request_headers: { response: { header_mutation: { set_headers: unknown[] } } } };
    answer.request_headers.response.header_mutation.set_headers.push(...set_headers);
    return answer as unknown as ProcessingResponse;
  }

  test('forward_rules: only allowed (and not disallowed) request headers go to the processor', async () => {
    const p = await proxyWith('--extproc-forward-allowed-headers', ':path,:authority,x-keep*', '--extproc-forward-disallowed-headers', 'x-keep-not');
    const r = await send(p, route, { headers: { 'x-keep-me': '1', 'x-keep-not': '2', 'x-drop': '3' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.seen[0]?.headers ?? {}).sort(), [':authority', ':path', 'x-keep-me']);
    assert.equal(JSON.parse(r.text).headers['x-drop'], '3', 'forward rules only change what the processor sees');
  });

  test('per-host: a disabled host suffix opens no stream; an override changes the mode for its hosts only', async () => {
    const p = await proxyWith('--extproc-per-host', 'skip.example=disabled,send.example=response_header_mode:SEND');
    const streams = ep.streams;
    const skipped = await send(p, route, { host: 'a.skip.example' });
    assert.equal(skipped.status, 503, 'no ext_proc, no route');
    assert.equal(ep.streams, streams);
    const overridden = await send(p, (m) => (m.kind === 'request_headers' ? route() : common('response_headers', {})), { host: 'b.send.example' });
    assert.deepEqual(overridden.seen.map((m) => m.kind), ['request_headers', 'response_headers']);
    const plain = await send(p, route);
    assert.deepEqual(plain.seen.map((m) => m.kind), ['request_headers']);
  });
});
