/**
 * End to end, WebSocket over HTTP/2 (RFC 8441) with node's http2 client on the h2c ingress: an extended CONNECT
 * runs the chain (a cache miss, then a hit), is answered 200 and echoes WebSocket frames through the worker; a
 * handshake towards a moved actor is re-run after the stale answer; a `:protocol` the proxy does not forward is
 * refused 403; a worker's non-101 answer (a WebSocket version it refuses) is the stream's response.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { once } from 'node:events';
import type { ClientHttp2Session } from 'node:http2';
import { actorName, adminJson, client, hostOf, proxyStats, startStack, stubActor, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { openSocket } from '../testing/ws-client.js';
import { connectH2, extendedConnect, FrameReader, textFrame } from '../testing/h2-ws-client.js';
import type { TunnelStatsBlock } from '../ops/tunnel-stats.js';

let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;
let session: ClientHttp2Session;

describe('WebSocket over HTTP/2', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, capacity: 8, actors: 20 }, proxyArgs: ['--cache-ttl-ms', '60000'] });
    ({ stub, proxy } = stack);
    session = await connectH2(proxy.ingress);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    session?.close();
    await stack?.stop();
  });

  const tunnels = async (): Promise<TunnelStatsBlock> => (await adminJson<{ tunnels: TunnelStatsBlock }>(proxy.admin, '/stats')).tunnels;

  test('the server announces extended CONNECT', () => {
    assert.equal(session.remoteSettings.enableConnectProtocol, true);
  });

  test('extended CONNECT: 200, an echo through a cache miss, then a hit, both ways over the stream', async () => {
    const actor = actorName(1);
    const before = await proxyStats(proxy);
    const first = await extendedConnect(session, hostOf(actor));
    assert.equal(first.status, 200);
    assert.equal(first.headers['sec-websocket-accept'], undefined);
    const reader = new FrameReader(first.stream);
    first.stream.write(textFrame('hello'));
    const a = await reader.next();
    assert.deepEqual([a.actor, a.seq, a.data], [actor, 1, 'hello']);
    first.stream.write(textFrame('x'.repeat(300)));
    assert.equal((await reader.next()).data, 'x'.repeat(300));
    const second = await extendedConnect(session, hostOf(actor));
    assert.equal(second.status, 200);
    const reader2 = new FrameReader(second.stream);
    second.stream.write(textFrame('hit'));
    assert.equal((await reader2.next()).worker, a.worker, 'the hit goes to the cached worker');
    const after = await proxyStats(proxy);
    assert.equal(after.cache.misses - before.cache.misses, 1);
    assert.equal(after.cache.hits - before.cache.hits, 1);
    assert.equal((await tunnels()).upgrade.active, 2);
    first.stream.close();
    second.stream.end();
    await waitFor(async () => (await tunnels()).upgrade.active === 0, 5000, 'both tunnels closed');
    const t = await tunnels();
    assert.ok(t.upgrade.bytes.fromClient > 300 && t.upgrade.bytes.toClient > 300);
  });

  test('a moved actor: the handshake meets the stale worker, is re-run, and opens on the new worker', async () => {
    const actor = actorName(2);
    const ws = await openSocket(proxy.ingress, actor); // fills the cache with the old worker
    const old = (await ws.echo('before')).worker;
    await adminJson(stub.admin, `/actors/demo/${actor}/move`, 'POST');
    await ws.closed;
    await waitFor(async () => (await stubActor(stub, actor)).workerIp !== old, 5000, 'the actor to move');
    const staleBefore = (await proxyStats(proxy)).reruns.stale;
    const moved = await extendedConnect(session, hostOf(actor));
    assert.equal(moved.status, 200);
    const reader = new FrameReader(moved.stream);
    moved.stream.write(textFrame('after'));
    const echo = await reader.next();
    assert.equal(echo.worker, (await stubActor(stub, actor)).workerIp);
    assert.equal((await proxyStats(proxy)).reruns.stale - staleBefore, 1);
    moved.stream.close();
  });

  test('refused and non-101 answers are the stream response', async () => {
    const refused = await extendedConnect(session, hostOf(actorName(4)), 'foo');
    assert.equal(refused.status, 403);
    refused.stream.resume();
    await once(refused.stream, 'end');
    // The worker refuses a WebSocket version it does not speak.
    const plain = await extendedConnect(session, hostOf(actorName(4)), 'websocket', '99');
    assert.ok(plain.status >= 400 && plain.status < 500, `status ${plain.status}`);
    let body = '';
    plain.stream.setEncoding('utf8');
    plain.stream.on('data', (c: string) => (body += c));
    await once(plain.stream, 'end');
    assert.ok(body.length > 0);
  });
});
