/**
 * End to end: the comparison resolver (`--resolver apiserver`), then outages longer than the re-run budget. With
 * the control plane unreachable hits still answer 200 and misses get ext_proc's 503 once the budget is spent; with
 * ext_proc down hits still answer 200 and misses get 500 once the budget is spent (the stream error, not a
 * timeout). Outages shorter than the budget are ridden out: `outage-retries.test.ts`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import net from 'node:net';
import { actorName, client, extprocStats, proxyStats, resetStats, resumeCalls, send, startExtproc, startStub, type Extproc, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { ERRORS } from '../http/errors.js';

/** A TCP relay in front of the control plane that the test can cut (the control plane "goes down"). */
interface Relay {
  readonly address: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

async function startRelay(target: string): Promise<Relay> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  let up = true;
  const server = net.createServer((downstream) => {
    if (!up) {
      downstream.destroy();
      return;
    }
    const upstream = net.connect(port, host);
    for (const s of [downstream, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    downstream.pipe(upstream).pipe(downstream);
    downstream.on('close', () => upstream.destroy());
    upstream.on('close', () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${a.port}`,
    cut() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      up = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let stub: Stub;
let relay: Relay;
let extproc: Extproc;
let proxy: InProcessTestProxy;
let viaApiserver: InProcessTestProxy;
let viaApiserverOff: InProcessTestProxy;

describe('outages longer than the re-run budget', () => {
  before(async () => {
    stub = await startStub({ workers: 6, capacity: 4, actors: 20 });
    relay = await startRelay(stub.grpc);
    extproc = await startExtproc({ ...stub, grpc: relay.address });
    const apiserverArgs = ['--resolver', 'apiserver', '--apiserver', stub.grpc, '--worker-port', String(stub.workerPort)];
    [proxy, viaApiserver, viaApiserverOff] = await Promise.all([
      // A short re-run budget, waited out by the misses of the outage tests (the connect timeout must be below it).
      startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--cache-ttl-ms', '60000', '--connect-timeout-ms', '250', '--rerun-budget-ms', '500'] }),
      startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--cache-ttl-ms', '60000', ...apiserverArgs] }),
      startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', ...apiserverArgs] }),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([proxy, viaApiserver, viaApiserverOff].map((p) => p?.stop()));
    await extproc?.component.stop();
    await relay?.close();
    await stub?.component.stop();
  });

  test('--resolver apiserver: the proxy calls ResumeActor itself on a miss, never on a hit, and never uses ext_proc', async () => {
    const actor = actorName(0);
    await resetStats(stub.admin, extproc.admin, viaApiserver.admin);
    const first = await send(viaApiserver, actor);
    assert.equal(first.status, 200);
    assert.equal(first.app?.actor, actor);
    const hits = await Promise.all(Array.from({ length: 20 }, () => send(viaApiserver, actor)));
    for (const h of hits) assert.equal(h.app?.worker, first.app?.worker);
    const s = await proxyStats(viaApiserver);
    assert.equal(s.resolver.kind, 'apiserver');
    assert.deepEqual(s.resolver.resumeCalls, { OK: 1 });
    assert.equal(s.cache.hits, 20);
    assert.equal(s.extproc.streams, 0);
    assert.equal((await extprocStats(extproc)).streams.total, 0);
    assert.equal(await resumeCalls(stub), 1);

    // Cache off: one ResumeActor per request, the same answers.
    const off = [];
    for (let i = 0; i < 10; i++) off.push(await send(viaApiserverOff, actor));
    for (const a of off) {
      assert.equal(a.status, 200);
      assert.equal(a.app?.actor, actor);
      assert.equal(a.app?.worker, first.app?.worker);
    }
    assert.deepEqual((await proxyStats(viaApiserverOff)).resolver.resumeCalls, { OK: 10 });

    // Errors are mapped exactly as ext_proc maps them.
    const unknown = await send(viaApiserver, '', { host: 'no-such-actor.demo.actors.resources.substrate.ate.dev' });
    const viaExtproc = await send(proxy, '', { host: 'no-such-actor.demo.actors.resources.substrate.ate.dev' });
    assert.equal(unknown.status, 404);
    assert.deepEqual([unknown.status, unknown.text], [viaExtproc.status, viaExtproc.text]);
    const invalid = await send(viaApiserver, '', { host: 'example.com' });
    const invalidViaExtproc = await send(proxy, '', { host: 'example.com' });
    assert.deepEqual([invalid.status, invalid.text], [invalidViaExtproc.status, invalidViaExtproc.text]);
  });

  test('control plane down: hits still answer 200, misses get 503 once the budget is spent', async () => {
    const cached = actorName(1);
    const cold = actorName(2);
    assert.equal((await send(proxy, cached)).status, 200);
    relay.cut();
    try {
      await resetStats(proxy.admin);
      for (let i = 0; i < 5; i++) {
        const hit = await send(proxy, cached);
        assert.equal(hit.status, 200);
        assert.equal(hit.app?.actor, cached);
      }
      const miss = await send(proxy, cold);
      assert.equal(miss.status, 503);
      assert.match(miss.text, /unavailable/);
      const s = await proxyStats(proxy);
      assert.equal(s.cache.hits, 5);
      assert.equal(s.cache.entries, 1, 'only the cached actor: the unknown and invalid hosts above were never learned');
      assert.equal(s.cache.evictions.stale + s.cache.evictions.connect + s.cache.evictions.reset, 0);
    } finally {
      relay.restore();
    }
    // Nothing bad was learned: once the control plane is back, the miss resolves.
    let answer = await send(proxy, cold);
    await waitFor(async () => answer.status === 200 || (answer = await send(proxy, cold)).status === 200, 5000, 'the miss to resolve');
    assert.equal(answer.status, 200);
    assert.equal(answer.app?.actor, cold);
  });

  test('ext_proc down: hits still answer 200, misses get 500 once the budget is spent', async () => {
    const cached = actorName(3);
    const cold = actorName(4);
    assert.equal((await send(proxy, cached)).status, 200);
    await extproc.component.stop();
    await resetStats(proxy.admin);
    for (let i = 0; i < 5; i++) {
      const hit = await send(proxy, cached);
      assert.equal(hit.status, 200);
      assert.equal(hit.app?.actor, cached);
    }
    const miss = await send(proxy, cold);
    assert.equal(miss.status, ERRORS.EXTPROC_FAILED.status);
    assert.equal(miss.text.trim(), ERRORS.EXTPROC_FAILED.text);
    const s = await proxyStats(proxy);
    assert.equal(s.cache.hits, 5);
    assert.equal(s.extproc.timeouts, 0, 'the miss failed on the stream error, not by waiting out a timeout');
  });
});
