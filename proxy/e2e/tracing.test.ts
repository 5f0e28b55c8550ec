/**
 * End to end, tracing on (`OTEL_TRACES_EXPORTER=otlp` to a receiver in this test): the exact span trees of a miss,
 * a hit, a moved actor (one re-run) and a WebSocket, across the proxy and extproc (each its own tracer provider and
 * exporter, though both run in the test's process), each in the trace the client's `traceparent` named, with the
 * worker receiving a `traceparent` of that trace from the upstream attempt's span; a gRPC call and a CONNECT tunnel
 * each get their server span and their access line in the trace they named; a request the sampler leaves out still
 * carries its trace to the worker, and makes no span.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';
import { OtlpReceiver, outline, type ReceivedSpan } from '../../lib/testing/otlp-receiver.js';
import { accessLine, actorName, adminJson, ATESPACE, client, hostOf, send, startStack, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { openSocket } from '../testing/ws-client.js';
import { fixture } from '../testing/helpers.js';
import { waitFor } from '../../lib/testing/wait.js';
import { rawExchange } from '../testing/raw-exchange.js';

let receiver: OtlpReceiver;
let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;

before(async () => {
  receiver = await OtlpReceiver.start();
  stack = await startStack({
    stub: { workers: 4, capacity: 4, actors: 8 },
    extprocEnv: receiver.env(),
    proxyArgs: ['--cache-ttl-ms', '60000', '--cache-refresh-ahead', 'off', '--filter', fixture('rewrite-header'), '--connect-listen', '127.0.0.1:0'],
    proxyEnv: receiver.env(),
  });
  ({ stub, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
  await receiver?.close();
});

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

function traceparent(sampled = true): { readonly header: string; readonly traceId: string; readonly parent: string } {
  const traceId = hex(16);
  const parent = hex(8);
  return { header: `00-${traceId}-${parent}-${sampled ? '01' : '00'}`, traceId, parent };
}

const PROCESS = 'envoy.service.ext_proc.v3.ExternalProcessor/Process';
const RESUME = 'ateapi.Control/ResumeActor';
const P = 'actor-edge-proxy';
const X = 'actor-edge-extproc';

/** The spans of an attempt that misses, `depth` levels down: filter, lookup, ext_proc (→ extproc → ResumeActor), upstream. */
function missAttempt(depth: number): string[] {
  const at = (d: number, line: string): string => `${'  '.repeat(depth + d)}${line}`;
  return [at(0, `${P} filter rewrite-header`), at(0, `${P} actor-cache lookup`), at(0, `${P} ${PROCESS}`), at(1, `${X} ${PROCESS}`), at(2, `${X} ${RESUME}`), at(0, `${P} GET`)];
}

/** The proxy's spans are all in once its server span (which ends last) arrived, and extproc's when it has `n`. */
function complete(extprocSpans: number) {
  return (spans: ReceivedSpan[]): boolean =>
    spans.some((s) => s.service === P && s.kind === 2) && spans.filter((s) => s.service === X).length >= extprocSpans;
}

const find = (spans: readonly ReceivedSpan[], service: string, name: string, nth = 0): ReceivedSpan => {
  const found = spans.filter((s) => s.service === service && s.name === name)[nth];
  assert.ok(found, `no span ${service} ${name} #${nth}`);
  return found;
};

const serverOf = (spans: readonly ReceivedSpan[]): ReceivedSpan => {
  const found = spans.find((s) => s.service === P && s.kind === 2);
  assert.ok(found, 'no proxy server span');
  return found;
};

/** The worker's view: the traceparent it received names the trace and the proxy's upstream span. */
function assertWorkerContinues(spans: readonly ReceivedSpan[], received: string | undefined, traceId: string, nthUpstream = 0): void {
  const upstream = spans.filter((s) => s.service === P && s.kind === 3 && s.name === 'GET')[nthUpstream];
  assert.ok(upstream, 'the upstream attempt has a span');
  assert.equal(received, `00-${traceId}-${upstream.spanId}-01`);
}

test('a miss: server span → user filter, cache lookup, ext_proc stream (→ extproc stream → ResumeActor), upstream attempt', async () => {
  const tp = traceparent();
  const a = await send(proxy, actorName(0), { path: '/?echo_headers=1', headers: { traceparent: tp.header, tracestate: 'vendor=abc' } });
  assert.equal(a.status, 200);
  const spans = await receiver.waitForTrace(tp.traceId, complete(2), 'the miss trace');
  assert.deepEqual(outline(spans), [`${P} GET`, ...missAttempt(1)]);
  const server = serverOf(spans);
  assert.equal(server.kind, 2);
  assert.equal(server.parentSpanId, tp.parent, "the client's span is the parent");
  assert.equal(server.attributes['http.request.method'], 'GET');
  assert.equal(server.attributes['http.response.status_code'], 200);
  assert.equal(server.attributes['url.path'], '/', 'no query string');
  assert.equal(server.attributes['actor_edge.actor'], actorName(0));
  assert.equal(server.attributes['actor_edge.atespace'], ATESPACE);
  assert.equal(server.attributes['actor_edge.cache'], 'miss');
  assert.equal(server.attributes['actor_edge.route.source'], 'extproc');
  assert.equal(server.attributes['actor_edge.request_id'], a.headers['x-request-id']);
  assert.match(String(server.attributes['actor_edge.worker']), /^127\.\d+\.\d+\.\d+:\d+$/);
  assert.equal(find(spans, P, 'actor-cache lookup').attributes['actor_edge.cache'], 'miss');
  const stream = find(spans, X, PROCESS);
  assert.equal(stream.attributes['actor_edge.resume.role'], 'leader');
  assert.equal(stream.attributes['actor_edge.resolve.outcome'], 'ok');
  assert.equal(find(spans, X, RESUME).attributes['rpc.response.status_code'], 'OK');
  assert.ok(find(spans, P, PROCESS).events.includes('request_headers'), 'each exchange is an event');
  assertWorkerContinues(spans, a.app?.headers?.traceparent, tp.traceId);
  assert.equal(a.app?.headers?.tracestate, 'vendor=abc', "the client's trace state goes on with its trace");
});

test('a hit: server span → user filter, cache lookup, upstream attempt (no ext_proc, no extproc span)', async () => {
  await send(proxy, actorName(1));
  const tp = traceparent();
  const a = await send(proxy, actorName(1), { path: '/?echo_headers=1', headers: { traceparent: tp.header } });
  assert.equal(a.status, 200);
  const spans = await receiver.waitForTrace(tp.traceId, complete(0), 'the hit trace');
  assert.deepEqual(outline(spans), [`${P} GET`, `  ${P} filter rewrite-header`, `  ${P} actor-cache lookup`, `  ${P} GET`]);
  assert.equal(serverOf(spans).attributes['actor_edge.cache'], 'hit');
  assert.equal(find(spans, P, 'actor-cache lookup').attributes['actor_edge.cache'], 'hit');
  const upstream = spans.find((s) => s.kind === 3) as ReceivedSpan;
  assert.equal(upstream.attributes['actor_edge.upstream.outcome'], 'response');
  assert.equal(upstream.attributes['http.response.status_code'], 200);
  assertWorkerContinues(spans, a.app?.headers?.traceparent, tp.traceId);
});

test('a moved actor: the stale attempt, then a re-run span holding the second attempt (lookup, ext_proc, upstream)', async () => {
  const actor = actorName(2);
  await send(proxy, actor);
  await adminJson(stub.admin, `/actors/${ATESPACE}/${actor}/move`, 'POST');
  const tp = traceparent();
  const a = await send(proxy, actor, { path: '/?echo_headers=1', headers: { traceparent: tp.header } });
  assert.equal(a.status, 200);
  const spans = await receiver.waitForTrace(tp.traceId, complete(2), 'the re-run trace');
  assert.deepEqual(outline(spans), [
    `${P} GET`,
    `  ${P} filter rewrite-header`,
    `  ${P} actor-cache lookup`,
    `  ${P} GET`,
    `  ${P} rerun`,
    ...missAttempt(2),
  ]);
  const [stale, second] = spans.filter((s) => s.service === P && s.kind === 3 && s.name === 'GET').sort((x, y) => (x.startNs < y.startNs ? -1 : 1)) as [ReceivedSpan, ReceivedSpan];
  assert.equal(stale.attributes['actor_edge.upstream.outcome'], 'stale');
  assert.equal(stale.attributes['http.response.status_code'], 421);
  assert.equal(stale.status, 2, 'the stale attempt is an error');
  assert.equal(second.attributes['http.request.resend_count'], 1);
  assert.notEqual(second.attributes['actor_edge.worker'], stale.attributes['actor_edge.worker']);
  const rerun = find(spans, P, 'rerun');
  assert.equal(rerun.attributes['actor_edge.rerun.reason'], 'stale');
  assert.equal(rerun.attributes['actor_edge.attempt'], 1);
  const server = serverOf(spans);
  assert.equal(server.attributes['actor_edge.cache'], 'rerun');
  assert.equal(server.attributes['actor_edge.attempts'], 2);
  assert.equal(a.app?.headers?.traceparent, `00-${tp.traceId}-${second.spanId}-01`, 'the worker that answered got the second attempt as parent');
});

test('a WebSocket: one server span from the handshake to the close, the 101 attempt under it', async () => {
  const actor = actorName(3);
  await send(proxy, actor);
  const tp = traceparent();
  const socket = await openSocket(proxy.ingress, actor, '/ws', { traceparent: tp.header });
  assert.equal((await socket.echo('ping')).data, 'ping');
  await socket.close();
  const spans = await receiver.waitForTrace(tp.traceId, complete(0), 'the WebSocket trace');
  assert.deepEqual(outline(spans), [`${P} GET`, `  ${P} filter rewrite-header`, `  ${P} actor-cache lookup`, `  ${P} GET`]);
  const server = serverOf(spans);
  assert.equal(server.attributes['http.response.status_code'], 101);
  assert.equal(server.attributes['actor_edge.upgrade'], 'websocket');
  assert.ok(Number(server.attributes['actor_edge.tunnel.bytes_from_client']) > 0);
  const upstream = spans.find((s) => s.kind === 3) as ReceivedSpan;
  assert.equal(upstream.attributes['http.response.status_code'], 101);
  assert.ok(server.endNs > upstream.endNs, 'the server span lasts until the tunnel closed');
  const requestId = String(socket.handshake['x-request-id']);
  assert.equal(server.attributes['actor_edge.request_id'], requestId, 'the 101 carries the request id');
  const line = await accessLine(proxy, requestId);
  assert.equal(line.traceId, tp.traceId);
  assert.equal(line.upgrade, 'websocket');
});

test('not sampled (flags 00): the worker still gets the trace, flagged not sampled, and no span is exported', async () => {
  await send(proxy, actorName(4));
  const tp = traceparent(false);
  const a = await send(proxy, actorName(4), { path: '/?echo_headers=1', headers: { traceparent: tp.header } });
  assert.match(String(a.app?.headers?.traceparent), new RegExp(`^00-${tp.traceId}-[0-9a-f]{16}-00$`));
  // A sampled request sent after it is exported; by then the unsampled one would have been too.
  const later = traceparent();
  await send(proxy, actorName(4), { headers: { traceparent: later.header } });
  await receiver.waitForTrace(later.traceId, complete(0), 'the sampled request after it');
  assert.deepEqual(receiver.trace(tp.traceId), []);
});

test('no traceparent: a new trace, its id in the access log', async () => {
  const a = await send(proxy, actorName(5), { requestId: 'traced-1' });
  assert.equal(a.status, 200);
  let line: Record<string, unknown> | undefined;
  await waitFor(() => (line = proxy.logs().find((l) => l.msg === 'access' && l.requestId === 'traced-1')) !== undefined, 5000, 'the access line');
  const traceId = String(line?.traceId);
  assert.match(traceId, /^[0-9a-f]{32}$/);
  const spans = await receiver.waitForTrace(traceId, complete(2), 'the new trace');
  assert.equal(serverOf(spans).parentSpanId, '');
});

interface EchoReply {
  readonly request_id: string;
  readonly message: string;
}

test('a gRPC call (HTTP/2): a server span and its upstream attempt in the trace its metadata named, the access line and x-request-id with it', async () => {
  const actor = actorName(6);
  await send(proxy, actor);
  const Echo = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), 'actoredge.demo.Echo');
  const c = new Echo(proxy.address, grpc.credentials.createInsecure(), { 'grpc.default_authority': hostOf(actor) });
  try {
    const tp = traceparent();
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', tp.header);
    let headers: grpc.Metadata | undefined;
    const reply = await new Promise<EchoReply>((resolve, reject) => {
      const call = (c as unknown as { Echo: (r: object, m: grpc.Metadata, cb: (e: grpc.ServiceError | null, r: EchoReply) => void) => grpc.ClientUnaryCall }).Echo(
        { message: 'traced' },
        metadata,
        (err, r) => (err ? reject(err) : resolve(r)),
      );
      call.on('metadata', (m: grpc.Metadata) => (headers = m));
    });
    assert.equal(reply.message, 'traced');
    const requestId = String(headers?.get('x-request-id')[0]);
    assert.equal(requestId, reply.request_id, 'the client is told the id the worker got');
    const spans = await receiver.waitForTrace(tp.traceId, complete(0), 'the gRPC trace');
    assert.deepEqual(outline(spans), [`${P} POST`, `  ${P} filter rewrite-header`, `  ${P} actor-cache lookup`, `  ${P} POST`]);
    const server = serverOf(spans);
    assert.equal(server.parentSpanId, tp.parent);
    assert.equal(server.attributes['network.protocol.version'], '2');
    assert.equal(server.attributes['url.path'], '/actoredge.demo.Echo/Echo');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['actor_edge.cache'], 'hit');
    assert.equal(server.attributes['actor_edge.request_id'], requestId);
    const line = await accessLine(proxy, requestId);
    assert.equal(line.traceId, tp.traceId);
    assert.equal(line.protocol, 'h2');
    assert.equal(line.path, '/actoredge.demo.Echo/Echo');
  } finally {
    c.close();
  }
});

test('a CONNECT tunnel: its own server span until the tunnel closed, its access line in that trace; the request inside is a trace of its own', async () => {
  const actor = actorName(7);
  const outer = traceparent();
  const inner = traceparent();
  const target = hostOf(actor, 80);
  const answer = await rawExchange(
    proxy.addresses.connect as string,
    `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\ntraceparent: ${outer.header}\r\n\r\n` +
      `GET /inside HTTP/1.1\r\nHost: ${hostOf(actor)}\r\ntraceparent: ${inner.header}\r\nConnection: close\r\n\r\n`,
    10_000,
  );
  assert.equal(answer.status, 200);
  const requestId = /\r\nx-request-id: ([^\r]+)/i.exec(answer.head)?.[1];
  assert.ok(requestId !== undefined, `the CONNECT answer carries x-request-id: ${answer.head}`);
  assert.match(answer.raw, /\r\n\r\nHTTP\/1\.1 200 /, 'the request inside was answered');
  const spans = await receiver.waitForTrace(outer.traceId, complete(0), 'the CONNECT trace');
  assert.deepEqual(outline(spans), [`${P} CONNECT`]);
  const server = serverOf(spans);
  assert.equal(server.parentSpanId, outer.parent);
  assert.equal(server.attributes['http.response.status_code'], 200);
  assert.ok(Number(server.attributes['actor_edge.tunnel.bytes_from_client']) > 0);
  assert.ok(Number(server.attributes['actor_edge.tunnel.bytes_to_client']) > 0);
  const line = await accessLine(proxy, requestId);
  assert.equal(line.method, 'CONNECT');
  assert.equal(line.traceId, outer.traceId);
  assert.equal((line.tunnel as { kind?: string } | null)?.kind, 'connect');
  const insideSpans = await receiver.waitForTrace(inner.traceId, complete(2), 'the trace of the request inside');
  assert.deepEqual(outline(insideSpans), [`${P} GET`, ...missAttempt(1)]);
  // Each span's wall clock is anchored on Date.now() when it starts (1 ms resolution), so two spans' end times
  // compare within 1 ms: the request inside ends at most then after the tunnel that carried it.
  const CLOCK_RESOLUTION_NS = 1_000_000n;
  assert.ok(serverOf(insideSpans).endNs <= server.endNs + CLOCK_RESOLUTION_NS, 'the tunnel outlives the request inside it');
});
