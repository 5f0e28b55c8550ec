/**
 * End to end, a real stack (in the test's process) and a real WebSocket client: an echo through a cache miss and a
 * hit; a moved actor (its open socket is closed by the worker; the next handshake meets the stale worker, is re-run,
 * and gets its 101 from the new worker); a worker that stops closes its tunnels; the idle timeout; upgrade requests
 * the proxy does not forward; a flood of handshakes against the worker's caps; the drain of open sockets at SIGTERM;
 * accounting in /stats, /metrics and the access log.
 * Needs processes: the drain test sends SIGTERM and expects exit code 0 (that one proxy runs as its own process).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import net from 'node:net';
import { request } from 'undici';
import { actorName, adminJson, client, hostOf, proxyStats, send, startStack, stubActor, type Extproc, type Stack, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy, type ProxyHandle } from '../testing/proxy.js';
import { HandshakeRefused, openSocket } from '../testing/ws-client.js';
import { rawExchange } from '../testing/raw-exchange.js';
import type { TunnelStatsBlock } from '../ops/tunnel-stats.js';

let stack: Stack;
let stub: Stub;
let extproc: Extproc;
let proxy: InProcessTestProxy;

before(async () => {
  stack = await startStack({ stub: { workers: 4, capacity: 8, actors: 20 }, proxyArgs: ['--cache-ttl-ms', '60000'] });
  ({ stub, extproc, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
});

const tunnels = async (p: ProxyHandle): Promise<TunnelStatsBlock> => (await adminJson<{ tunnels: TunnelStatsBlock }>(p.admin, '/stats')).tunnels;

test('an echo through a cache miss, then through a hit, from the actor on its worker', async () => {
  const actor = actorName(1);
  const before = await proxyStats(proxy);
  const first = await openSocket(proxy.ingress, actor);
  const a = await first.echo('hello');
  assert.equal(a.actor, actor);
  assert.equal(a.seq, 1);
  assert.equal(a.data, 'hello');
  assert.equal((await first.echo('again')).seq, 2);
  const second = await openSocket(proxy.ingress, actor);
  const b = await second.echo('hit');
  assert.equal(b.worker, a.worker, 'the hit goes to the cached worker');
  const after = await proxyStats(proxy);
  assert.equal(after.cache.misses - before.cache.misses, 1);
  assert.equal(after.cache.hits - before.cache.hits, 1);
  assert.equal((await tunnels(proxy)).upgrade.active, 2);
  await first.close();
  await second.close();
  await waitFor(async () => (await tunnels(proxy)).upgrade.active === 0, 5000, 'both tunnels closed');
  const t = await tunnels(proxy);
  assert.ok(t.upgrade.total >= 2);
  assert.ok(t.upgrade.bytes.fromClient > 0 && t.upgrade.bytes.toClient > 0);
  // The client starts the WebSocket close; the worker, as RFC 6455 asks, closes the TCP connection first.
  assert.ok(t.upgrade.closed.client + t.upgrade.closed.upstream >= 2);
  const access = () => proxy.logs().filter((l) => l.msg === 'access' && l.status === 101 && l.authority === hostOf(actor));
  await waitFor(() => access().length >= 2, 5000, 'the access-log lines of both tunnels');
  const line = access()[0] as { tunnel: { bytesToClient: number; closedBy: string }; upgrade: string };
  assert.equal(line.upgrade, 'websocket');
  assert.ok(['client', 'upstream'].includes(line.tunnel.closedBy));
  assert.ok(line.tunnel.bytesToClient > 0);
  const metrics = await (await request(`${proxy.admin}/metrics`, { dispatcher: client })).body.text();
  assert.match(metrics, /actor_edge_proxy_tunnels_total\{kind="upgrade"\} [1-9]/);
  assert.match(metrics, /actor_edge_proxy_tunnel_bytes_total\{kind="upgrade",direction="to_client"\} [1-9]/);
});

test('a moved actor: the worker closes its socket; the next handshake is re-run and gets its 101 from the new worker', async () => {
  const actor = actorName(2);
  const ws = await openSocket(proxy.ingress, actor);
  const old = (await ws.echo('before')).worker;
  const staleBefore = (await proxyStats(proxy)).reruns.stale;
  await adminJson(stub.admin, `/actors/demo/${actor}/move`, 'POST');
  await ws.closed; // the client sees the close: a tunnel is never re-run once open
  await waitFor(async () => (await stubActor(stub, actor)).workerIp !== old, 5000, 'the actor to move');
  const moved = await openSocket(proxy.ingress, actor);
  const echo = await moved.echo('after');
  assert.notEqual(echo.worker, old);
  assert.equal(echo.worker, (await stubActor(stub, actor)).workerIp);
  assert.equal((await proxyStats(proxy)).reruns.stale - staleBefore, 1, 'the handshake was re-run once after the stale answer');
  await moved.close();
});

test('a worker that stops closes its tunnels; the client sees the close', async () => {
  const actor = actorName(3);
  const ws = await openSocket(proxy.ingress, actor);
  const worker = (await ws.echo('x')).worker;
  const closedBefore = (await tunnels(proxy)).upgrade.closed.upstream;
  await adminJson(stub.admin, `/workers/${worker}/stop`, 'POST');
  try {
    await ws.closed;
    await waitFor(async () => (await tunnels(proxy)).upgrade.closed.upstream > closedBefore, 5000, 'the tunnel closed by the worker');
  } finally {
    await adminJson(stub.admin, `/workers/${worker}/start`, 'POST');
  }
});

test('upgrade requests the proxy does not forward each get a clear answer', async () => {
  const host = hostOf(actorName(4));
  const ws = ['Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='];
  const ingress = proxy.address;
  // Upgrade without Connection: upgrade: an ordinary request (Upgrade is hop-by-hop and dropped).
  const plain = await rawExchange(ingress, ['GET /plain HTTP/1.1', `Host: ${host}`, 'Upgrade: websocket', ...ws]);
  assert.equal(plain.status, 200);
  assert.equal(JSON.parse(plain.body).path, '/plain');
  // An unknown token: refused.
  const unknown = await rawExchange(ingress, ['GET / HTTP/1.1', `Host: ${host}`, 'Connection: upgrade', 'Upgrade: foo/1']);
  assert.equal(unknown.status, 403);
  assert.equal(unknown.body, 'upgrade not allowed\n');
  // A WebSocket handshake that is not a GET: refused.
  const post = await rawExchange(ingress, ['POST / HTTP/1.1', `Host: ${host}`, 'Connection: upgrade', 'Upgrade: websocket', 'Content-Length: 0', ...ws]);
  assert.equal(post.status, 403);
  // h2c: never forwarded; served as HTTP/1.1.
  const h2c = await rawExchange(ingress, ['GET /h2c HTTP/1.1', `Host: ${host}`, 'Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA']);
  assert.equal(h2c.status, 200);
  assert.equal(JSON.parse(h2c.body).path, '/h2c');
  // A handshake for a host that names no actor: ext_proc's 404, relayed.
  await assert.rejects(openSocket(proxy.ingress, 'not..an..actor'), (e: unknown) => e instanceof HandshakeRefused && e.status === 404);
  assert.ok((await tunnels(proxy)).upgrade.refused >= 2);
});

test('a flood of handshakes to one worker: open tunnels hold its slots; the rest are refused at once with 503', async () => {
  const capped = await startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--upstream-max-connections', '2', '--upstream-max-pending', '2'] });
  try {
    const actor = actorName(5);
    assert.equal((await send(capped, actor)).status, 200); // warm the binding
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => openSocket(capped.ingress, actor)));
    const open = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as HandshakeRefused] : []));
    assert.equal(open.length, 4);
    assert.equal(refused.length, 6);
    for (const r of refused) {
      assert.equal(r.status, 503);
      assert.match(r.body, /upstream overflow/);
    }
    for (const s of open) assert.equal((await s.echo('still')).data, 'still');
    await Promise.all(open.map((s) => s.close()));
    // The slots come back when the tunnels close.
    await waitFor(async () => (await tunnels(capped)).upgrade.active === 0, 5000, 'tunnels closed');
    const again = await openSocket(capped.ingress, actor);
    await again.close();
  } finally {
    await capped.stop();
  }
});

test('an idle tunnel is closed after --tunnel-idle-timeout-ms', async () => {
  const idle = await startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--tunnel-idle-timeout-ms', '300'] });
  try {
    const ws = await openSocket(idle.ingress, actorName(6));
    assert.equal((await ws.echo('one')).seq, 1);
    await ws.closed;
    await waitFor(async () => (await tunnels(idle)).upgrade.closed.idle === 1, 5000, 'the idle close counted');
  } finally {
    await idle.stop();
  }
});

test('SIGTERM: /ready fails at once, open sockets keep echoing until the drain timeout, then close; new handshakes are refused', async () => {
  const draining = await startTestProxy({ extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--drain-timeout-ms', '1500'] });
  const actor = actorName(7);
  const ws = await openSocket(draining.ingress, actor);
  assert.equal((await ws.echo('before')).seq, 1);
  // A second client connection, open before the SIGTERM, that asks for an upgrade after it.
  const ingress = draining.ingress.replace('http://', '');
  const [host, port] = [ingress.slice(0, ingress.lastIndexOf(':')), Number(ingress.slice(ingress.lastIndexOf(':') + 1))];
  const late = net.connect(port, host);
  await new Promise((resolve) => late.once('connect', resolve));
  draining.component.child.kill('SIGTERM');
  await waitFor(async () => (await request(`${draining.admin}/ready`, { dispatcher: client })).statusCode === 503, 5000, '/ready to fail');
  assert.equal((await ws.echo('during')).seq, 2, 'the open socket keeps flowing');
  late.write(`GET / HTTP/1.1\r\nHost: ${hostOf(actor)}\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    late.on('data', (c: Buffer) => (text += c.toString()));
    late.once('close', () => resolve(text));
  });
  assert.match(answer, /^HTTP\/1\.1 503 /);
  assert.match(answer, /shutting down/);
  await ws.closed; // closed at the drain timeout
  assert.equal(await draining.component.exited, 0);
});

test('a 64 MiB flood from the worker arrives whole, and a client that stops reading holds the worker back (backpressure)', async () => {
  // Far more than the kernel's socket buffers on loopback can hold (a few MiB each way).
  const FLOOD = 64 * 1024 * 1024;
  const socket = await openSocket(proxy.ingress, actorName(5));
  let received = 0;
  socket.ws.on('message', (data, isBinary) => {
    if (isBinary) received += (data as Buffer).length;
  });
  const raw = (socket.ws as unknown as { _socket: net.Socket })._socket;
  raw.pause(); // the client stops reading before the flood starts
  socket.ws.send(JSON.stringify({ flood: FLOOD }));
  // While the client reads nothing, the worker may only fill the socket buffers on the way: far less than the flood.
  await waitFor(async () => (await tunnels(proxy)).upgrade.active === 1, 5000, 'the tunnel open');
  await new Promise((r) => setTimeout(r, 1000));
  const stalled = (await tunnels(proxy)).upgrade.bytes.toClient;
  assert.ok(stalled < FLOOD / 2, `${stalled} bytes went towards a client that read nothing`);
  raw.resume();
  await waitFor(() => received === FLOOD, 30_000, 'the whole flood');
  assert.equal(received, FLOOD);
  await socket.close();
});
