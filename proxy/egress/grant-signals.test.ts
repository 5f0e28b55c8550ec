import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cachedDecider, DecisionTallies } from './egress-decider.js';
import type { EgressCloseReason } from './egress-stats.js';
import { GrantSignals } from './grant-signals.js';
import { EgressGrants } from './grants.js';
import { SharedVerdicts, type EgressVerdictMessage } from './shared-verdicts.js';
import { EgressVerdictCache, type EgressKey, type EgressVerdict, type Resolution } from './verdict-cache.js';
import { ALLOW, DENY, digest, egressKey, fakeClock } from './testing/verdicts.js';
import { memoryRelay } from '../../lib/testing/memory-relay.js';

const TTL = 60_000;
const HOUR = 3_600_000;
const NOT_RUNNING: EgressVerdict = { kind: 'deny', status: 403, body: 'actor is STATUS_SUSPENDED, not running', outcome: 'not_running' };
const A = egressKey(digest('a'), '127.0.0.1:9000');
const A2 = egressKey(digest('a'), '127.0.0.1:9001');
const B = egressKey(digest('b'), '127.0.0.1:9000', { atespace: 'demo', name: 'b' });

class FakeTunnel {
  closedWith: EgressCloseReason | undefined;
  close(reason: EgressCloseReason): void {
    this.closedWith ??= reason;
  }
}

const relay = () => memoryRelay<EgressVerdictMessage>();

/** Two processes of one cluster: each its cache, shared table, signals, decider and grants. */
function cluster(t: TestContext) {
  const clock = fakeClock();
  const r = relay();
  const process = (id: number) => {
    const cache = new EgressVerdictCache({ ttlMs: TTL, maxEntries: 100, now: clock.now });
    const signals = new GrantSignals(cache);
    const shared = new SharedVerdicts(cache, r.channel(id), signals);
    const decider = cachedDecider(cache, new DecisionTallies(), signals);
    const grants = new EgressGrants({ decider, now: clock.now, ask: async () => ({ verdict: ALLOW, cacheable: true }) });
    signals.attach(grants);
    t.after(() => {
      grants.close();
      shared.close();
    });
    /** `n` tunnels of `key` open here, granted by a verdict stored here (`hostname`: allowed for that name). */
    const open = (key: EgressKey, n: number, hostname?: string): FakeTunnel[] =>
      Array.from({ length: n }, () => {
        const hold = grants.hold(key, clock.now() + HOUR, { destination: key.destination, certificatePem: '' }, { origin: 0, generation: 1, expiresAtMs: clock.now() + TTL }, hostname === undefined ? undefined : [{ rule: 0, hostnames: ['*'] }]);
        if (hostname !== undefined) hold.allowFor(hostname);
        const tunnel = new FakeTunnel();
        hold.attach(tunnel);
        return tunnel;
      });
    /** A CONNECT's miss here, answered `verdict` by ext_proc. */
    const miss = (key: EgressKey, verdict: EgressVerdict) => decider.decide(key, clock.now() + HOUR, async (): Promise<Resolution> => ({ verdict, cacheable: verdict.kind !== 'deny' || verdict.outcome === 'denied' }));
    return { cache, signals, grants, open, miss };
  };
  return { clock, relay: r, one: process(1), two: process(2) };
}

const reasons = (tunnels: readonly FakeTunnel[]): (EgressCloseReason | undefined)[] => [...new Set(tunnels.map((x) => x.closedWith))];

test("a denial learned in one process closes the key's tunnels in every process (the stored denial is adopted); an eviction alone closes nothing", async (t) => {
  const { one, two, relay } = cluster(t);
  const here = one.open(A, 2);
  const there = two.open(A, 3);
  const otherKey = two.open(A2, 1);
  await one.miss(A, ALLOW);
  relay.flush();
  assert.deepEqual([...reasons(here), ...reasons(there)], [undefined, undefined]);
  one.cache.evict({ atespace: 'demo', name: 'a' }); // DELETE /cache/egress: new CONNECTs ask again, tunnels are not judged by it
  relay.flush();
  assert.deepEqual([...reasons(here), ...reasons(there)], [undefined, undefined]);
  await one.miss(A, DENY); // a CONNECT after the eviction, asked after the policy changed
  assert.deepEqual(reasons(here), ['revoked-denied'], 'closed where it was learned');
  assert.deepEqual(reasons(there), [undefined], 'not before the relay delivers');
  relay.flush();
  assert.deepEqual(reasons(there), ['revoked-denied'], 'and in the other process once it adopted the denial');
  assert.deepEqual(reasons(otherKey), [undefined], 'another destination of the same certificate is its own grant');
});

test('the actor found not running in one process closes every tunnel of its certificate in every process; a process holding none sends nothing', async (t) => {
  const { one, two, relay } = cluster(t);
  const here = one.open(A, 1);
  const there = [...two.open(A, 2), ...two.open(A2, 2)];
  const bystander = two.open(B, 1);
  await one.miss(A2, ALLOW);
  relay.flush();
  await one.miss(A, NOT_RUNNING);
  assert.deepEqual(reasons(here), ['revoked-not-running']);
  assert.equal(one.cache.lookup(A2).kind, 'miss', "the certificate's allowed verdicts are evicted: its next CONNECT asks again");
  assert.equal(one.cache.stats().evictions.revoked, 1, 'counted as revoked, not as an admin eviction');
  relay.flush();
  assert.deepEqual(reasons(there), ['revoked-not-running'], 'every destination of that certificate');
  assert.equal(two.cache.lookup(A2).kind, 'miss');
  assert.deepEqual(reasons(bystander), [undefined]);

  await one.miss(B, NOT_RUNNING);
  assert.equal(relay.queue.length, 0, 'no tunnel of that certificate here: no message (the holder finds out at its own re-validation)');
  assert.deepEqual(reasons(bystander), [undefined]);
});

test("a revoke in one process evicts the actor's verdicts and closes its tunnels in every process; it answers what it did here", async (t) => {
  const { one, two, relay } = cluster(t);
  await one.miss(A, ALLOW);
  await one.miss(A2, ALLOW);
  relay.flush();
  const here = one.open(A, 2);
  const there = two.open(A2, 3);
  const bystander = two.open(B, 1);
  assert.deepEqual(one.signals.revoke({ atespace: 'demo', name: 'a' }), { evicted: 2, tunnelsClosed: 2 });
  assert.deepEqual(reasons(here), ['revoked-admin']);
  relay.flush();
  assert.deepEqual(reasons(there), ['revoked-admin']);
  assert.deepEqual(reasons(bystander), [undefined]);
  assert.equal(two.cache.lookup(A).kind, 'miss', 'evicted there too: the next CONNECT asks again');
});

test('hostname rules learned in one process are checked against the hostname tunnels of the key in every process: those no longer allowed close, the others stay', async (t) => {
  const { one, two, relay } = cluster(t);
  const rules = (...hostnames: string[]): EgressVerdict => ({ kind: 'hostnames', actorId: 'uid-a', atespace: 'demo', name: 'a', rules: [{ rule: 0, hostnames }] });
  const apiHere = one.open(A, 1, 'api.example.test');
  const apiThere = two.open(A, 2, 'api.example.test');
  const wwwThere = two.open(A, 1, 'www.example.test');
  const outrightThere = two.open(A, 1);
  await one.miss(A, rules('www.example.test')); // the policy's api rule removed, read by a CONNECT's miss here
  assert.deepEqual(reasons(apiHere), ['revoked-denied']);
  assert.deepEqual([...reasons(apiThere), ...reasons(wwwThere)], [undefined, undefined], 'not before the relay delivers');
  relay.flush();
  assert.deepEqual(reasons(apiThere), ['revoked-denied']);
  assert.deepEqual(reasons(outrightThere), ['revoked-denied'], 'allowed outright: never read for a hostname');
  assert.deepEqual(reasons(wwwThere), [undefined]);
  assert.equal(two.grants.size, 1, 'the grant goes on for the tunnel it kept');
  assert.equal(one.grants.size, 0);
});
