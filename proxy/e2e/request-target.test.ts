/**
 * End to end, on the real wire (apiserver-stub, extproc and proxy in the test's process, on loopback): request
 * targets the proxy does not forward are answered at the ingress and cannot evict a binding or reach ext_proc; an
 * absolute-form target's authority is the request's authority everywhere; a request the upstream client refuses to
 * build is a local error; client-sent forwarding headers are removed unless the peer is a trusted hop.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accessLine, actorName, client, hostOf, proxyStats, resetStats, send, startStack, type DemoAnswer, type ProxyStats, type Stack } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { fixture } from '../testing/helpers.js';
import { rawExchange } from '../testing/raw-exchange.js';

let stack: Stack;
let proxy: InProcessTestProxy;
let trusting: InProcessTestProxy;

describe('request targets the proxy does not forward', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, capacity: 8, actors: 24 }, proxyArgs: ['--cache-ttl-ms', '60000', '--filter', fixture('set-expect')] });
    proxy = stack.proxy;
    trusting = await stack.addProxy(['--cache-ttl-ms', '60000', '--xff-trusted-hops', '1']);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  interface RawAnswer {
    readonly status: number;
    readonly headers: Record<string, string>;
    readonly body: string;
  }

  /** One raw HTTP/1.1 exchange (`Connection: close`) on the proxy's ingress. */
  async function raw(p: InProcessTestProxy, requestLine: string, headers: readonly string[]): Promise<RawAnswer> {
    const text = (await rawExchange(p.address, `${requestLine}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`)).raw;
    const [head = '', body = ''] = text.split('\r\n\r\n');
    const [statusLine = '', ...lines] = head.split('\r\n');
    const out: Record<string, string> = {};
    for (const l of lines) out[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    return { status: Number(statusLine.split(' ')[1]), headers: out, body };
  }

  /** What a hostile request must not change: evictions, ext_proc streams, upstream failures, re-runs. */
  function untouched(s: ProxyStats): unknown {
    return { evictions: s.cache.evictions, streams: s.extproc.streams, connectFailures: s.upstream.connectFailures, resets: s.upstream.resets, reruns: s.reruns };
  }

  const NOTHING = {
    evictions: { stale: 0, connect: 0, reset: 0, identity: 0, ttl: 0, lru: 0, admin: 0, worker: 0 },
    streams: 0,
    connectFailures: 0,
    resets: 0,
    reruns: { stale: 0, connect: 0, reset: 0 },
  };

  test('targets the proxy does not forward are refused at the ingress and leave a cached binding alone', async () => {
    const actor = actorName(20);
    const host = hostOf(actor);
    assert.equal((await send(proxy, actor)).status, 200, 'the binding is learned');
    await resetStats(proxy.admin);

    const cases: { line: string; status: number; code: string }[] = [
      { line: 'OPTIONS * HTTP/1.1', status: 404, code: 'PROXY_ERR_ABSOLUTE_PATH_REJECTED' },
      { line: 'GET foo://x/ HTTP/1.1', status: 400, code: 'PROXY_ERR_INVALID_TARGET' },
      { line: `GET ftp://${host}/file HTTP/1.1`, status: 400, code: 'PROXY_ERR_INVALID_TARGET' },
      { line: `GET https://${host}/ HTTP/1.1`, status: 400, code: 'PROXY_ERR_INVALID_TARGET' },
    ];
    for (const [i, c] of cases.entries()) {
      const requestId = `hostile-target-${i}`;
      const answer = await raw(proxy, c.line, [`Host: ${host}`, `X-Request-Id: ${requestId}`]);
      assert.equal(answer.status, c.status, c.line);
      assert.equal((await accessLine(proxy, requestId)).error, c.code, c.line);
    }
    const after = await proxyStats(proxy);
    assert.deepEqual(untouched(after), NOTHING, 'no eviction, no ext_proc stream, no upstream failure, no re-run');
    assert.equal(after.upstream.requests, 0, 'nothing reached a worker');

    const again = await send(proxy, actor);
    assert.equal(again.status, 200);
    const s = await proxyStats(proxy);
    assert.equal(s.cache.hits, 1, 'the binding is still cached');
    assert.equal(s.extproc.streams, 0);
  });

  test('a request the upstream client refuses to build is a local 500 that neither evicts nor re-runs', async () => {
    const actor = actorName(20);
    assert.equal((await send(proxy, actor)).status, 200);
    await resetStats(proxy.admin);
    const refused = await send(proxy, actor, { headers: { 'x-test-set-expect': '1' }, requestId: 'unbuildable-1' });
    assert.equal(refused.status, 500);
    assert.equal(refused.text, 'the upstream request could not be built\n');
    assert.equal((await accessLine(proxy, 'unbuildable-1')).error, 'PROXY_ERR_UPSTREAM_REQUEST_INVALID');
    assert.deepEqual(untouched(await proxyStats(proxy)), NOTHING);
    assert.equal((await send(proxy, actor)).status, 200);
    assert.equal((await proxyStats(proxy)).cache.hits, 2, 'the binding was used by both requests and is still cached');
  });

  test("an absolute-form target's authority replaces Host for the cache, ext_proc and the worker, which gets origin-form", async () => {
    const [named, hosted] = [actorName(21), actorName(22)];
    await resetStats(proxy.admin);
    const answer = await raw(proxy, `GET http://${hostOf(named)}/x/y?echo_headers=1 HTTP/1.1`, [`Host: ${hostOf(hosted)}`, 'X-Request-Id: absolute-1']);
    assert.equal(answer.status, 200);
    const app = JSON.parse(answer.body) as DemoAnswer;
    assert.equal(app.actor, named, 'routed by the target authority');
    assert.equal(app.path, '/x/y', 'the worker receives origin-form');
    assert.equal(app.headers?.host, hostOf(named), 'the forwarded Host is the target authority');
    assert.equal((await accessLine(proxy, 'absolute-1')).authority, hostOf(named));

    const origin = await send(proxy, named);
    assert.equal(origin.app?.actor, named);
    const s = await proxyStats(proxy);
    assert.equal(s.extproc.streams, 1, 'one slow path, for the target authority');
    assert.equal(s.cache.hits, 1, 'the binding learned from the absolute-form request serves the origin-form one');

    const empty = await raw(proxy, `GET http://${hostOf(named)} HTTP/1.1`, [`Host: ${hostOf(hosted)}`]);
    assert.equal(empty.status, 200);
    assert.equal((JSON.parse(empty.body) as DemoAnswer).path, '/', 'an empty path is /');
  });

  test('userinfo in an absolute-form target or in Host is refused before any filter runs', async () => {
    const actor = actorName(20);
    await resetStats(proxy.admin);
    const inTarget = await raw(proxy, `GET http://user:secret@${hostOf(actor)}/ HTTP/1.1`, [`Host: ${hostOf(actor)}`, 'X-Request-Id: userinfo-1']);
    assert.equal(inTarget.status, 400);
    assert.equal((await accessLine(proxy, 'userinfo-1')).error, 'PROXY_ERR_INVALID_TARGET');
    const inHost = await raw(proxy, 'GET / HTTP/1.1', [`Host: user:secret@${hostOf(actor)}`, 'X-Request-Id: userinfo-2']);
    assert.equal(inHost.status, 400);
    assert.equal((await accessLine(proxy, 'userinfo-2')).error, 'PROXY_ERR_INVALID_AUTHORITY');
    const s = await proxyStats(proxy);
    assert.deepEqual(untouched(s), NOTHING);
    assert.equal(s.upstream.requests, 0);
  });

  const FORWARDING = {
    Forwarded: 'for=192.0.2.60;proto=https;host=evil.example',
    'X-Forwarded-Host': 'evil.example',
    'X-Real-IP': '192.0.2.60',
    'X-Forwarded-For': '192.0.2.60',
    'X-Forwarded-Proto': 'https',
  };

  test('with no trusted hop a client cannot pass forwarding headers to the actor', async () => {
    const a = await send(proxy, actorName(20), { path: '/?echo_headers=1', headers: FORWARDING });
    const h = a.app?.headers ?? {};
    assert.equal(h.forwarded, undefined);
    assert.equal(h['x-forwarded-host'], undefined);
    assert.equal(h['x-real-ip'], undefined);
    assert.equal(h['x-forwarded-for'], '192.0.2.60, 127.0.0.1', 'the peer is appended: the last entry is the one to trust');
    assert.equal(h['x-forwarded-proto'], 'http');
  });

  test('behind --xff-trusted-hops 1 the trusted hop\'s forwarding headers reach the actor', async () => {
    const a = await send(trusting, actorName(20), { path: '/?echo_headers=1', headers: FORWARDING });
    const h = a.app?.headers ?? {};
    assert.equal(h.forwarded, FORWARDING.Forwarded);
    assert.equal(h['x-forwarded-host'], 'evil.example');
    assert.equal(h['x-real-ip'], '192.0.2.60');
    assert.equal(h['x-forwarded-for'], '192.0.2.60, 127.0.0.1');
    assert.equal(h['x-forwarded-proto'], 'https');
  });
});
