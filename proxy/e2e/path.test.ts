/**
 * End to end, cache off (today's path): real apiserver-stub, extproc and proxy on loopback, in the test's process.
 * Every request goes through one ext_proc stream and one ResumeActor; immediate responses, header hygiene, limits,
 * streamed bodies, server-sent events and user filters are checked on the real wire.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rawExchange } from '../testing/raw-exchange.js';
import { waitFor } from '../../lib/testing/wait.js';
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { actorName, adminJson, client, extprocStats, hostOf, proxyStats, resetStats, resumeCalls, send, startStack, stubActor, type Extproc, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { fixture } from '../testing/helpers.js';
import { fileURLToPath } from 'node:url';

let stack: Stack;
let stub: Stub;
let extproc: Extproc;
let proxy: InProcessTestProxy;
let filtered: InProcessTestProxy;
/** Short timeouts, for the tests that wait them out. */
let impatient: InProcessTestProxy;

const example = (name: string): string => fileURLToPath(new URL(`../../examples/${name}.js`, import.meta.url));

before(async () => {
  // The bearer-token example filter reads the environment of the process it runs in: this one.
  process.env.BEARER_TOKENS = 'e2e-token';
  // Budgets generous enough for a loaded machine.
  stack = await startStack({
    stub: { workers: 6, capacity: 4, actors: 20 },
    proxyArgs: ['--actor-cache', 'off', '--headers-timeout-ms', '2000', '--extproc-message-timeout-ms', '3000'],
  });
  ({ stub, extproc, proxy } = stack);
  filtered = await stack.addProxy([
    '--actor-cache', 'off',
    '--filter', fixture('rewrite-header'),
    '--filter', fixture('local-answer'),
    '--filter', fixture('thrower'),
    '--filter', example('bearer-token'),
  ]);
  // The timeout tests make the other side far slower than these.
  impatient = await stack.addProxy([
    '--actor-cache', 'off', '--headers-timeout-ms', '300', '--extproc-message-timeout-ms', '300',
  ]);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
  delete process.env.BEARER_TOKENS;
});

test('a suspended actor answers 200 after 1 ext_proc stream and 1 ResumeActor; 100 more cost 100 of each', async () => {
  const actor = actorName(0);
  assert.equal((await stubActor(stub, actor)).status, 'SUSPENDED');
  await resetStats(stub.admin, extproc.admin, proxy.admin);
  const first = await send(proxy, actor, { requestId: 'first-request' });
  assert.equal(first.status, 200);
  assert.equal(first.app?.actor, actor);
  assert.equal(first.app?.atespace, 'demo');
  assert.equal(first.app?.requestId, 'first-request');
  assert.equal((await proxyStats(proxy)).extproc.streams, 1);
  assert.equal(await resumeCalls(stub), 1);
  assert.equal((await stubActor(stub, actor)).status, 'RUNNING');

  // One after another: concurrent requests for one actor would share one ResumeActor flight in extproc.
  const more = [];
  for (let i = 0; i < 100; i++) more.push(await send(proxy, actor));
  for (const a of more) {
    assert.equal(a.status, 200);
    assert.equal(a.app?.actor, actor);
  }
  const s = await proxyStats(proxy);
  assert.equal(s.extproc.streams, 101);
  assert.equal(s.cache.enabled, false);
  assert.equal(await resumeCalls(stub), 101);
  assert.equal(s.extproc.active, 0);
  await waitFor(async () => (await extprocStats(extproc)).streams.active === 0, 3000, 'extproc active streams back to 0');
});

test('immediate responses from ext_proc reach the client as sent: 404 for an unknown or invalid host', async () => {
  const unknown = await send(proxy, '', { host: hostOf('no-such-actor') });
  assert.equal(unknown.status, 404);
  const invalid = await send(proxy, '', { host: 'example.com' });
  assert.equal(invalid.status, 404);
  assert.match(invalid.text, /invalid host "example.com"/);
  assert.match(String(invalid.headers['content-type']), /^text\/plain/);
});

test('client-forged internal headers change nothing: the request reaches the actor its Host names, and only it', async () => {
  const target = actorName(1);
  const other = actorName(2);
  const otherAnswer = await send(proxy, other);
  assert.equal(otherAnswer.status, 200);
  const forged = {
    'x-ate-target-port': '1',
    'ate-target-actor': `demo/${other}`,
    'x-ate-original-host': hostOf(other),
    'x-ate-original-dst': `${otherAnswer.app?.worker}:${stub.workerPort}`,
    'x-envoy-original-dst-host': `${otherAnswer.app?.worker}:${stub.workerPort}`,
    'ate-endpoint-cached': `${otherAnswer.app?.worker}:${stub.workerPort}`,
    'x-ate-assignment-stale': 'true',
  };
  const a = await send(proxy, target, { headers: forged, requestId: 'forged-1', path: '/?echo_headers=1' });
  assert.equal(a.status, 200);
  assert.equal(a.app?.actor, target);
  assert.ok((await stubActor(stub, target)).requestIds.includes('forged-1'));
  assert.ok(!(await stubActor(stub, other)).requestIds.includes('forged-1'));
  const seen = a.app?.headers ?? {};
  for (const h of Object.keys(forged)) assert.equal(seen[h], undefined, `${h} reached the actor`);
});

test('hop-by-hop headers are not forwarded; x-forwarded-for/-proto and x-request-id are set', async () => {
  const text = (await rawExchange(
    proxy.address,
    [
      'GET /?echo_headers=1 HTTP/1.1',
      `Host: ${hostOf(actorName(1))}`,
      'Connection: close, X-Named-Hop',
      'X-Named-Hop: 1',
      'Keep-Alive: timeout=1',
      'TE: trailers',
      'Upgrade: websocket',
      'Proxy-Connection: keep-alive',
      'X-Forwarded-For: 198.51.100.1',
      'X-Forwarded-Proto: https',
      '',
      '',
    ].join('\r\n'),
  )).raw;
  assert.match(text, /^HTTP\/1.1 200/);
  const app = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string>; requestId: string };
  for (const h of ['x-named-hop', 'keep-alive', 'te', 'upgrade', 'proxy-connection']) assert.equal(app.headers[h], undefined, h);
  assert.equal(app.headers['x-forwarded-for'], '198.51.100.1, 127.0.0.1');
  assert.equal(app.headers['x-forwarded-proto'], 'http');
  assert.match(app.requestId, /^[0-9a-f-]{36}$/);
  assert.equal(app.headers['x-request-id'], app.requestId);
});

test('request heads over 60 KiB → 431, no Host → 400, headers not received in time → 408', async () => {
  const addr = proxy.address;
  assert.match((await rawExchange(addr, `GET / HTTP/1.1\r\nHost: ${hostOf(actorName(1))}\r\nX-Big: ${'x'.repeat(61 * 1024)}\r\n\r\n`)).raw, /^HTTP\/1.1 431/);
  assert.match((await rawExchange(addr, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n')).raw, /^HTTP\/1.1 400/);
  assert.match((await rawExchange(impatient.address, `GET / HTTP/1.1\r\nHost: ${hostOf(actorName(1))}\r\n`, 30_000)).raw, /^HTTP\/1.1 408/);
});

test('a 10 MB POST and a 10 MB response pass intact through the proxy', async () => {
  const size = 10 * 1024 * 1024;
  const body = Buffer.alloc(size, 7);
  const up = await send(proxy, actorName(3), { method: 'POST', body });
  assert.equal(up.status, 200);
  assert.equal(up.app?.bodyLength, size);
  assert.equal(up.app?.bodySha256, createHash('sha256').update(body).digest('hex'));
  const down = await request(`${proxy.ingress}/?bytes=${size}`, { headers: { host: hostOf(actorName(3)) }, dispatcher: client });
  assert.equal(down.statusCode, 200);
  let received = 0;
  for await (const chunk of down.body) received += (chunk as Buffer).length;
  assert.equal(received, size);
  // Constant memory: a body six times larger moves the proxy's peak RSS by less than its own size.
  const peak = async (): Promise<number> => ((await proxyStats(proxy)) as unknown as { process: { maxRssBytes: number } }).process.maxRssBytes;
  const before = await peak();
  const big = 6 * size;
  async function* chunks(): AsyncGenerator<Buffer> {
    const block = Buffer.alloc(256 * 1024, 3);
    for (let sent = 0; sent < big; sent += block.length) yield block;
  }
  const large = await request(`${proxy.ingress}/`, {
    method: 'POST',
    headers: { host: hostOf(actorName(3)) },
    body: chunks() as unknown as Buffer,
    dispatcher: client,
  });
  assert.equal(((await large.body.json()) as { bodyLength: number }).bodyLength, big);
  const grew = (await peak()) - before;
  assert.ok(grew < big, `peak RSS grew by ${grew} bytes for a ${big}-byte body`);
});

test('server-sent events from a worker pass through whole and in order (one at a time: plain-worker.test.ts)', async () => {
  const res = await request(`${proxy.ingress}/?sse=3`, { headers: { host: hostOf(actorName(3)) }, dispatcher: client });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/event-stream');
  const events = (await res.body.text()).split('\n\n').filter((e) => e !== '');
  assert.deepEqual(events.map((e) => e.split('\n').slice(0, 2).join(' ')), ['id: 0 event: message', 'id: 1 event: message', 'id: 2 event: message']);
});

test('user filters: one rewrites a header the actor sees, one answers locally, one that throws fails only its request', async () => {
  const token = { authorization: 'Bearer e2e-token' };
  const denied = await send(filtered, actorName(4));
  assert.equal(denied.status, 401, 'the bearer-token example filter guards the proxy');
  const rewritten = await send(filtered, actorName(4), { path: '/?echo_headers=1', headers: { ...token, 'x-user': 'bob' } });
  assert.equal(rewritten.status, 200);
  assert.equal(rewritten.app?.headers?.['x-user'], 'BOB');
  assert.equal(rewritten.app?.headers?.['x-filtered-by'], 'rewrite-header');
  assert.equal(rewritten.app?.headers?.authorization, undefined, 'the credential is not forwarded');
  const teapot = await send(filtered, actorName(4), { path: '/teapot', headers: token });
  assert.equal(teapot.status, 418);
  const boom = await send(filtered, actorName(4), { path: '/boom', headers: token });
  assert.equal(boom.status, 500);
  const next = await send(filtered, actorName(4), { headers: token });
  assert.equal(next.status, 200);
  await waitFor(() => filtered.logs().some((l) => l.filter === 'thrower' && l.msg === 'filter failed'), 3000, 'the failure logged with the filter name');
});

test('an ext_proc message timeout → 504 (the control plane answers too slowly)', async () => {
  // Far slower than the proxy's 300 ms message timeout; and the stub waits for this call at the end of the file.
  await adminJson(stub.admin, '/config', 'PUT', { resolveLatencyMs: 1000, coldResumeMs: 1000 });
  try {
    const before = await proxyStats(impatient);
    const slow = await send(impatient, actorName(0));
    assert.equal(slow.status, 504);
    const after = await proxyStats(impatient);
    assert.equal(after.extproc.timeouts - before.extproc.timeouts, 1);
    assert.equal(after.extproc.active, 0);
  } finally {
    await adminJson(stub.admin, '/config', 'PUT', { resolveLatencyMs: 0, coldResumeMs: 5 });
  }
});
