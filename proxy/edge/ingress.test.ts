/** The ingress: header hygiene, limits (431, 400, 408) and user filters loaded with --filter. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rawExchange } from '../testing/raw-exchange.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import {
  fixture,
  
  routeTo,
  startScriptedExtProc,
  
  startUpstream,
  type ScriptedExtProc,
  type Upstream,
} from '../testing/helpers.js';
import { FORGEABLE_HEADERS } from '../testing/forgeable-headers.js';

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
/** A short headers timeout, for the test that waits it out. */
let impatient: InProcessTestProxy;

describe('ingress', () => {
  before(async () => {
    up = await startUpstream((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ headers: req.headers, raw: req.rawHeaders }));
    });
    ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address,
      '--headers-timeout-ms', '2000', // generous for every normal request
      '--strip-headers', 'x-corp-internal',
      '--filter', fixture('rewrite-header'),
      '--filter', fixture('local-answer'),
      '--filter', fixture('thrower'),] });
    impatient = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--headers-timeout-ms', '300'] });
  });

  after(async () => {
    await proxy.stop();
    await impatient.stop();
    await ep.close();
    await up.close();
  });

  function lastUpstreamHeaders(): Record<string, string> {
    return up.requests.at(-1)?.headers as Record<string, string>;
  }

  test('client-forged internal headers change nothing: removed before ext_proc and the actor see the request', async () => {
    const forged: Record<string, string> = { 'x-corp-internal': 'forged' };
    for (const h of FORGEABLE_HEADERS) forged[h] = h === 'x-ate-target-port' ? '9999' : '10.66.66.66:1';
    const seenBefore = ep.seen.length;
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), ...forged } });
    assert.equal(res.statusCode, 200);
    await res.body.text();
    const h = lastUpstreamHeaders();
    for (const name of [...FORGEABLE_HEADERS, 'x-corp-internal']) {
      if (name === 'x-ate-target-port') assert.equal(h[name], '80', 'the port comes from ext_proc, not the client');
      else assert.equal(h[name], undefined, name);
      assert.equal(ep.seen[seenBefore]?.headers[name], undefined, `${name} reached ext_proc`);
    }
    assert.equal(h.host, actorHost('a'));
  });

  test('hop-by-hop headers are not forwarded; x-forwarded-for/-proto and x-request-id are set', async () => {
    const text = (await rawExchange(
      proxy.address,
      [
        'GET /hop HTTP/1.1',
        `Host: ${actorHost('a')}`,
        'Connection: close, X-Hop-Named',
        'X-Hop-Named: secret',
        'Keep-Alive: timeout=99',
        'Proxy-Connection: keep-alive',
        'TE: trailers',
        'Upgrade: h2c',
        'X-Forwarded-For: 203.0.113.7',
        'X-Forwarded-Proto: https',
        'X-End-To-End: kept',
        '',
        '',
      ].join('\r\n'),
    )).raw;
    assert.match(text, /^HTTP\/1.1 200/);
    const h = lastUpstreamHeaders();
    for (const gone of ['x-hop-named', 'keep-alive', 'proxy-connection', 'te', 'upgrade']) assert.equal(h[gone], undefined, gone);
    assert.equal(h['x-end-to-end'], 'kept');
    assert.equal(h['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
    assert.equal(h['x-forwarded-proto'], 'http');
    assert.match(h['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);

    const withId = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-request-id': 'client-chosen-id' } });
    await withId.body.text();
    assert.equal(lastUpstreamHeaders()['x-request-id'], 'client-chosen-id');
  });

  test('request headers over 60 KiB → 431; just under passes', async () => {
    const big = (await rawExchange(proxy.address, `GET / HTTP/1.1\r\nHost: ${actorHost('a')}\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\nConnection: close\r\n\r\n`)).raw;
    assert.match(big, /^HTTP\/1.1 431/);
    const ok = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-big': 'a'.repeat(50 * 1024) } });
    assert.equal(ok.statusCode, 200);
    await ok.body.text();
  });

  test('no Host → 400 (HTTP/1.1 and HTTP/1.0); two Host headers → 400', async () => {
    const v11 = (await rawExchange(proxy.address, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n')).raw;
    assert.match(v11, /^HTTP\/1.1 400/);
    assert.match(v11, /missing Host header/);
    const v10 = (await rawExchange(proxy.address, 'GET / HTTP/1.0\r\n\r\n')).raw;
    assert.match(v10, /^HTTP\/1.1 400/);
    const two = (await rawExchange(proxy.address, `GET / HTTP/1.1\r\nHost: ${actorHost('a')}\r\nHost: ${actorHost('b')}\r\nConnection: close\r\n\r\n`)).raw;
    assert.match(two, /^HTTP\/1.1 400/);
    assert.match(two, /duplicate Host header/);
  });

  test('headers not received in time → 408', async () => {
    const text = (await rawExchange(impatient.address, `GET / HTTP/1.1\r\nHost: ${actorHost('a')}\r\nX-Slow: `, 30_000)).raw;
    assert.match(text, /^HTTP\/1.1 408/);
  });

  test('a --filter rewrites a header the actor then sees', async () => {
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a'), 'x-user': 'alice' } });
    assert.equal(res.statusCode, 200);
    const body = (await res.body.json()) as { headers: Record<string, string> };
    assert.equal(body.headers['x-user'], 'ALICE');
    assert.equal(body.headers['x-filtered-by'], 'rewrite-header');
  });

  test('a --filter answers locally: neither ext_proc nor the actor sees the request', async () => {
    const streams = ep.streams;
    const upCount = up.requests.length;
    const res = await request(`${proxy.ingress}/teapot`, { headers: { host: actorHost('a') } });
    assert.equal(res.statusCode, 418);
    assert.equal(res.headers['x-answered-by'], 'local-answer');
    assert.equal(await res.body.text(), "I'm a teapot\n");
    assert.equal(ep.streams, streams);
    assert.equal(up.requests.length, upCount);
  });

  test('a --filter that throws fails only its own request with 500; the next request succeeds', async () => {
    for (const path of ['/boom', '/boom-async']) {
      const res = await request(`${proxy.ingress}${path}`, { headers: { host: actorHost('a') } });
      assert.equal(res.statusCode, 500, path);
      assert.match(await res.body.text(), /filter/);
      const next = await request(`${proxy.ingress}/fine`, { headers: { host: actorHost('a') } });
      assert.equal(next.statusCode, 200);
      await next.body.text();
    }
  });

  test('a --filter module that is not a filter factory stops the proxy at start-up with a clear error', async () => {
    await assert.rejects(startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--filter', fixture('not-a-filter')] }), /default export must be a filter factory/);
    await assert.rejects(startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--filter', '/nonexistent/filter.js'] }), /cannot load module/);
  });
});
