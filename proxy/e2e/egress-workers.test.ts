/**
 * End to end, `--workers 2` (node:cluster: processes): the egress verdict table is shared between the worker
 * processes, as the actor bindings are. The real apiserver-stub and extproc's egress mode (in the test's process) and
 * the proxy as processes; each HTTP/1.1 CONNECT on its own connection, which the primary hands to the workers in turn.
 * A verdict one worker learned (an allow, a policy denial) is a hit in the other: one GetActor and one
 * GetActorEgressPolicy per key for every CONNECT, whichever worker served it. An eviction through the admin reaches
 * both.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { startEcho, type Destination } from '../egress/testing/egress-clients.js';
import type { ListedVerdict } from '../egress/egress-cache-admin.js';
import { ATESPACE, h1Through, startEgressStack, type ActorCertificate, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

let stack: EgressStack;
let proxy: EgressProxy;
let allowed: Destination;
let denied: Destination;

before(async () => {
  stack = await startEgressStack();
  proxy = await stack.startProxy({ ttlMs: 60_000, process: true, args: ['--workers', '2'] });
  allowed = await startEcho();
  denied = await startEcho();
});

after(async () => {
  await stack?.stop();
  await allowed?.close();
  await denied?.close();
});

/** Each worker's verdict of `cert` to `destination` (the primary fans `/cache/egress` out to its workers). */
async function perWorker(cert: ActorCertificate, destination: string): Promise<(ListedVerdict | undefined)[]> {
  const dump = await proxy.admin<{ workers: { status: number; body: { verdicts: ListedVerdict[] } }[] }>('GET', `/cache/egress?cert=${cert.digest}`);
  assert.equal(dump.status, 200);
  return dump.body.workers.map((w) => w.body.verdicts.find((v) => v.destination === destination));
}

/**
 * CONNECTs `destination` on fresh connections until the worker that adopted the verdict (origin ≠ 0: learned from the
 * other) has served one from it; each answer must be `status`. Returns how many were sent.
 */
async function untilTheOtherWorkerHits(cert: ActorCertificate, destination: string, status: number): Promise<number> {
  for (let sent = 1; sent <= 40; sent++) {
    const answer = await h1Through(proxy, cert, destination);
    assert.equal(answer.status, status);
    const adopted = (await perWorker(cert, destination)).find((v) => v !== undefined && v.origin !== 0);
    if (adopted !== undefined && adopted.hits > 0) return sent;
  }
  throw new Error('40 CONNECTs on fresh connections and the adopting worker served none');
}

interface Summed {
  egress: { cache: { hits: number; misses: number; shared: { enabled: boolean; adopted: number } } };
  workers: number;
}

test('--workers 2: a verdict learned by one worker is a hit in the other — one control-plane read per key, an allow and a denial alike; an admin eviction reaches both', async () => {
  const name = 'actor-000';
  const port = Number(allowed.address.slice(allowed.address.lastIndexOf(':') + 1));
  await stack.setPolicy(name, { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [port] }] });
  const cert = await stack.certificate(name);
  await proxy.admin('POST', '/stats/reset', {});
  const calls0 = await stack.controlCalls();

  assert.deepEqual(await h1Through(proxy, cert, allowed.address), { status: 200, body: 'ping' });
  await waitFor(async () => (await perWorker(cert, allowed.address)).every((v) => v !== undefined), 5000, 'both workers holding the allow');
  const origins = (await perWorker(cert, allowed.address)).map((v) => (v?.origin === 0 ? 'here' : 'adopted')).sort();
  assert.deepEqual(origins, ['adopted', 'here'], 'one worker stored it, the other adopted it');
  const allowedSent = await untilTheOtherWorkerHits(cert, allowed.address, 200);

  assert.equal((await h1Through(proxy, cert, denied.address)).status, 403);
  await waitFor(async () => (await perWorker(cert, denied.address)).every((v) => v?.verdict === 'deny'), 5000, 'both workers holding the denial');
  const deniedSent = await untilTheOtherWorkerHits(cert, denied.address, 403);

  const calls = await stack.controlCalls();
  assert.deepEqual({ getActor: calls.getActor - calls0.getActor, policy: calls.policy - calls0.policy }, { getActor: 2, policy: 2 }, 'one read of each per key');
  const summed = (await proxy.admin<Summed>('GET', '/stats')).body;
  assert.equal(summed.workers, 2);
  assert.equal(summed.egress.cache.shared.enabled, true);
  assert.ok(summed.egress.cache.shared.adopted >= 2, JSON.stringify(summed.egress.cache.shared));
  assert.deepEqual([summed.egress.cache.misses, summed.egress.cache.hits], [2, allowedSent + deniedSent]);

  // Evicted through the primary: gone from both; the next CONNECT asks the control plane once more.
  const evicted = await proxy.admin<{ workers: { status: number; body: { evicted: number } }[] }>('DELETE', `/cache/egress?actor=${ATESPACE}/${name}`);
  assert.deepEqual(evicted.body.workers.map((w) => w.status), [200, 200]);
  await waitFor(async () => (await perWorker(cert, allowed.address)).every((v) => v === undefined), 5000, 'the allow gone from both workers');
  assert.deepEqual((await perWorker(cert, denied.address)).filter((v) => v !== undefined), []);
  assert.deepEqual(await h1Through(proxy, cert, allowed.address), { status: 200, body: 'ping' });
  const after = await stack.controlCalls();
  assert.equal(after.getActor - calls.getActor, 1);
});
