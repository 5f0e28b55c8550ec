import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { leaseFor, type EgressDecider } from './egress-decider.js';
import type { EgressCloseReason } from './egress-stats.js';
import { EgressGrants, type GrantQuestion } from './grants.js';
import type { EgressKey, EgressVerdict, Lease, Resolution } from './verdict-cache.js';
import { ALLOW, DENY, digest, egressKey, fakeClock, UNAVAILABLE } from './testing/verdicts.js';

const TTL = 1000;
const HOUR = 3_600_000;
const NOT_RUNNING: EgressVerdict = { kind: 'deny', status: 403, body: 'actor is STATUS_SUSPENDED, not running', outcome: 'not_running' };
const UNKNOWN: EgressVerdict = { kind: 'deny', status: 403, body: 'unknown actor', outcome: 'unknown_actor' };

const A = egressKey(digest('a'), '127.0.0.1:9000');
const B = egressKey(digest('b'), '127.0.0.1:9000', { atespace: 'demo', name: 'b' });

class FakeTunnel {
  closedWith: EgressCloseReason | undefined;
  close(reason: EgressCloseReason): void {
    this.closedWith ??= reason;
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Grants on a fake clock and mocked timers, with a decider that asks `answer` (per destination and certificate) and
 * gives an allow a lease of one TTL from now (as the cache's store does), never past the certificate's NotAfter.
 */
function rig(t: TestContext, answer: (q: GrantQuestion) => EgressVerdict) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const clock = fakeClock();
  const asked: string[] = [];
  let generation = 100;
  const decider: Pick<EgressDecider, 'revalidate' | 'ttlMs'> = {
    ttlMs: TTL,
    async revalidate(_key, certNotAfterMs, slowPath) {
      const { verdict } = await slowPath();
      return verdict.kind !== 'deny' ? { verdict, cache: 'miss', lease: leaseFor(clock.now(), TTL, certNotAfterMs, ++generation) } : { verdict, cache: 'miss' };
    },
  };
  const grants = new EgressGrants({
    decider,
    now: clock.now,
    ask: async (q): Promise<Resolution> => {
      asked.push(q.certificatePem);
      return { verdict: answer(q), cacheable: true };
    },
  });
  /** Moves the clock and the timers on together, then lets the re-validations answer. */
  const advance = async (ms: number): Promise<void> => {
    clock.advance(ms);
    t.mock.timers.tick(ms);
    await settle();
  };
  const lease = (expiresInMs = TTL, origin = 0, gen = 1): Lease => ({ origin, generation: gen, expiresAtMs: clock.now() + expiresInMs });
  /** `n` tunnels of `key` opened under `granted` (`hostname`: allowed for that name by hostname rules; else outright). */
  const open = (key: EgressKey, n: number, granted: Lease = lease(), notAfterMs = clock.now() + HOUR, hostname?: string): FakeTunnel[] =>
    Array.from({ length: n }, () => {
      const hold = grants.hold(key, notAfterMs, { destination: key.destination, certificatePem: key.certDigest.slice(0, 1) }, granted, hostname === undefined ? undefined : READ_WITH);
      if (hostname !== undefined) hold.allowFor(hostname);
      const tunnel = new FakeTunnel();
      hold.attach(tunnel);
      return tunnel;
    });
  /** One tunnel of `key` allowed for `hostname` (as the actor sent it). */
  const openFor = (key: EgressKey, hostname: string): FakeTunnel => open(key, 1, lease(), clock.now() + HOUR, hostname)[0] as FakeTunnel;
  t.after(() => grants.close());
  return { clock, grants, asked, advance, lease, open, openFor };
}

/** The rules a CONNECT decided on its traffic was read against (any DNS name). */
const READ_WITH = [{ rule: 0, hostnames: ['*'] }];

const reasons = (tunnels: readonly FakeTunnel[]): (EgressCloseReason | undefined)[] => [...new Set(tunnels.map((x) => x.closedWith))];

test('one re-validation per key per lease however many tunnels, at 80 % of it; an allow renews the lease and the tunnels stay open', async (t) => {
  const { grants, asked, advance, open } = rig(t, () => ALLOW);
  const tunnels = open(A, 20);
  assert.equal(grants.size, 1, 'one grant for the key');
  await advance(TTL * 0.8 - 1);
  assert.equal(asked.length, 0, 'nothing asked before 80 % of the lease');
  await advance(1);
  assert.equal(asked.length, 1, 'one question for twenty tunnels');
  await advance(TTL * 0.8);
  assert.equal(asked.length, 2, 'the renewed lease is re-validated at 80 % of its own TTL');
  assert.deepEqual(reasons(tunnels), [undefined]);
  assert.deepEqual(grants.stats(), { renewed: 2, revoked: 0, failed: 0 });
});

test('a denial closes every tunnel of its key (revoked-denied), and no tunnel of another key', async (t) => {
  const { advance, open, asked } = rig(t, (q) => (q.certificatePem === 'a' ? DENY : ALLOW));
  const denied = open(A, 20);
  const others = open(B, 3);
  await advance(TTL * 0.8);
  assert.equal(asked.length, 2, 'one question per key');
  assert.deepEqual(reasons(denied), ['revoked-denied']);
  assert.deepEqual(reasons(others), [undefined]);
});

test('the actor not running, or unknown, closes its tunnels with that reason', async (t) => {
  const { advance, open, grants } = rig(t, (q) => (q.certificatePem === 'a' ? NOT_RUNNING : UNKNOWN));
  const suspended = open(A, 2);
  const deleted = open(B, 2);
  await advance(TTL * 0.8);
  assert.deepEqual(reasons(suspended), ['revoked-not-running']);
  assert.deepEqual(reasons(deleted), ['revoked-unknown']);
  assert.equal(grants.size, 0, 'ended grants are forgotten');
  assert.deepEqual(grants.stats(), { renewed: 0, revoked: 2, failed: 0 });
});

test('control plane down: the tunnels stay open while the lease lasts, the re-validation is tried again, then they close (revalidation-failed)', async (t) => {
  const { advance, open, asked, grants } = rig(t, () => UNAVAILABLE);
  const tunnels = open(A, 3);
  await advance(TTL * 0.8);
  assert.equal(asked.length, 1);
  assert.deepEqual(reasons(tunnels), [undefined], 'a failed re-validation closes nothing while the lease lasts');
  await advance(TTL * 0.1);
  assert.equal(asked.length, 2, 'tried again 10 % of the TTL later');
  assert.deepEqual(reasons(tunnels), [undefined]);
  await advance(TTL * 0.1 - 1);
  assert.deepEqual(reasons(tunnels), [undefined], 'still open just before the lease runs out');
  await advance(1);
  assert.deepEqual(reasons(tunnels), ['revalidation-failed'], 'closed when the lease ran out unrenewed');
  assert.deepEqual(grants.stats(), { renewed: 0, revoked: 0, failed: 2 });
});

test('a re-validation that succeeds after a failure, before the lease runs out, keeps the tunnels', async (t) => {
  let down = true;
  const { advance, open, asked } = rig(t, () => (down ? UNAVAILABLE : ALLOW));
  const tunnels = open(A, 2);
  await advance(TTL * 0.8);
  down = false;
  await advance(TTL * 0.1);
  assert.equal(asked.length, 2);
  await advance(TTL);
  assert.deepEqual(reasons(tunnels), [undefined], 'the renewal came in time: nothing closed at the old expiry');
  assert.equal(asked.length, 3, 'and the renewed lease is re-validated on its own schedule');
});

test("the certificate's NotAfter ends the grant: renewals stop at it, the tunnels close (certificate-expired)", async (t) => {
  const { advance, open, asked, clock } = rig(t, () => ALLOW);
  const notAfter = clock.now() + 2500;
  const tunnels = open(A, 2, { origin: 0, generation: 1, expiresAtMs: clock.now() + TTL }, notAfter);
  await advance(800); // renewed until 1800
  await advance(800); // renewed until 2500: the NotAfter, no renewal can go past it
  assert.equal(asked.length, 2);
  await advance(2500 - 1600 - 1);
  assert.deepEqual(reasons(tunnels), [undefined]);
  assert.equal(asked.length, 2, 'a lease that reaches the NotAfter is not re-validated');
  await advance(1);
  assert.deepEqual(reasons(tunnels), ['certificate-expired']);
});

test('a lease another process stored is re-validated at 90 %: the process that stored it renews it first', async (t) => {
  const { advance, open, lease, asked } = rig(t, () => ALLOW);
  open(A, 1, lease(TTL, 3));
  await advance(TTL * 0.8);
  assert.equal(asked.length, 0);
  await advance(TTL * 0.1);
  assert.equal(asked.length, 1);
});

test('a fresher verdict from elsewhere: an allow moves the schedule, a denial closes; a revoke closes what its filter matches', async (t) => {
  const { advance, open, lease, asked, grants } = rig(t, () => ALLOW);
  const a = open(A, 2);
  const b = open(B, 2);
  await advance(TTL * 0.5);
  grants.verdict(A, ALLOW, lease()); // e.g. another process renewed it, adopted here
  await advance(TTL * 0.3);
  assert.equal(asked.length, 1, 'only B was due: A was renewed half a TTL ago');
  grants.verdict(A, DENY, undefined);
  assert.deepEqual(reasons(a), ['revoked-denied']);
  assert.equal(grants.holdsCertificate(B.certDigest), true);
  assert.equal(grants.revoke({ atespace: 'demo', name: 'b' }, 'revoked-admin'), 2);
  assert.deepEqual(reasons(b), ['revoked-admin']);
  assert.equal(grants.holdsCertificate(B.certDigest), false);
  assert.equal(grants.revoke({ atespace: 'demo', name: 'b' }, 'revoked-admin'), 0, 'nothing left to close');
});

test('a CONNECT allowed but not yet open when its grant ends is told so (and a tunnel attached then is closed at once)', async (t) => {
  const { lease, grants, clock } = rig(t, () => ALLOW);
  const hold = grants.hold(A, clock.now() + HOUR, { destination: A.destination, certificatePem: 'a' }, lease());
  assert.equal(hold.ended, undefined);
  grants.revoke({ certDigest: A.certDigest }, 'revoked-admin');
  assert.equal(hold.ended, 'revoked-admin');
  const late = new FakeTunnel();
  hold.attach(late);
  assert.equal(late.closedWith, 'revoked-admin');
});

test('the last tunnel released forgets the grant: an idle key is never re-validated', async (t) => {
  const { advance, lease, grants, asked, clock } = rig(t, () => ALLOW);
  const holds = [1, 2].map(() => grants.hold(A, clock.now() + HOUR, { destination: A.destination, certificatePem: 'a' }, lease()));
  holds[0]?.release();
  holds[0]?.release();
  assert.equal(grants.size, 1);
  holds[1]?.release();
  assert.equal(grants.size, 0);
  await advance(TTL * 2);
  assert.equal(asked.length, 0);
});

test('a lease nearly spent when its first tunnel opened is re-validated at once rather than failed at its expiry', async (t) => {
  const { advance, open, lease, asked } = rig(t, () => ALLOW);
  const tunnels = open(A, 1, lease(50));
  await advance(0);
  assert.equal(asked.length, 1);
  await advance(100);
  assert.deepEqual(reasons(tunnels), [undefined]);
});

/** A verdict decided on the traffic: each rule's hostname patterns (lowered, as a policy stores them). */
const hostnames = (...rules: string[][]): EgressVerdict => ({ kind: 'hostnames', actorId: 'uid-a', atespace: 'demo', name: 'a', rules: rules.map((h, rule) => ({ rule, hostnames: h })) });

test('a tunnel allowed for a hostname holds its key\'s grant: re-validations that still allow its hostname keep it and renew the lease', async (t) => {
  const { advance, openFor, asked, grants } = rig(t, () => hostnames(['*.example.test']));
  const tunnel = openFor(A, 'API.Example.TEST');
  assert.equal(grants.size, 1, 'it holds a grant');
  assert.equal(grants.holdsCertificate(A.certDigest), true);
  await advance(TTL * 0.8);
  await advance(TTL * 0.8);
  await advance(TTL * 0.8);
  assert.equal(asked.length, 3, 'each renewed lease is re-validated on its own schedule');
  assert.equal(tunnel.closedWith, undefined, 'the name matches case-insensitively, as it did when it was read');
  assert.deepEqual(grants.stats(), { renewed: 3, revoked: 0, failed: 0 });
});

test('a re-validation whose hostname rules no longer match: the tunnels of the names dropped close (revoked-denied), those still allowed stay, and so does the grant', async (t) => {
  let answer = hostnames(['api.example.test', 'www.example.test']);
  const { advance, open, openFor, asked, grants } = rig(t, () => answer);
  const api = openFor(A, 'api.example.test');
  const www = [openFor(A, 'www.example.test'), openFor(A, 'www.example.test')];
  await advance(TTL * 0.8);
  assert.deepEqual(reasons([api, ...www]), [undefined]);
  answer = hostnames(['other.example.test'], ['www.example.test']);
  await advance(TTL * 0.8);
  assert.equal(api.closedWith, 'revoked-denied');
  assert.deepEqual(reasons(www), [undefined], 'a later rule still allows www');
  assert.equal(grants.size, 1);
  assert.deepEqual(grants.stats(), { renewed: 2, revoked: 0, failed: 0 }, 'the grant was renewed for the tunnels it kept');
  await advance(TTL * 0.8);
  assert.equal(asked.length, 3, 'and is re-validated on the renewed lease');
  const outright = open(A, 1);
  answer = hostnames(['www.example.test']);
  await advance(TTL * 0.8);
  assert.equal(outright[0]?.closedWith, 'revoked-denied', 'a tunnel allowed outright was never read for a hostname: closed');
  assert.deepEqual(reasons(www), [undefined]);
  answer = hostnames(['*.other.test']);
  await advance(TTL * 0.8);
  assert.deepEqual(reasons(www), ['revoked-denied'], 'no tunnel kept: the grant ends');
  assert.equal(grants.size, 0);
  assert.deepEqual(grants.stats(), { renewed: 4, revoked: 1, failed: 0 });
});

test('a fresher verdict from elsewhere re-checks the hostnames too; a plain allow keeps every tunnel', async (t) => {
  const { openFor, open, lease, grants } = rig(t, () => ALLOW);
  const api = openFor(A, 'api.example.test');
  const www = openFor(A, 'www.example.test');
  const outright = open(A, 1);
  grants.verdict(A, ALLOW, lease());
  assert.deepEqual(reasons([api, www, ...outright]), [undefined]);
  grants.verdict(A, hostnames(['www.example.test']), lease());
  assert.deepEqual([api.closedWith, www.closedWith, outright[0]?.closedWith], ['revoked-denied', undefined, 'revoked-denied']);
  grants.verdict(A, DENY, undefined);
  assert.equal(www.closedWith, 'revoked-denied');
  assert.equal(grants.size, 0);
});

test('tunnels allowed for a hostname close as the others do: a denial, the actor not running or unknown, a revoke, the NotAfter, a failed re-validation', async (t) => {
  const cases: { readonly reason: EgressCloseReason; readonly end: (r: ReturnType<typeof rig>) => Promise<void> | void }[] = [
    { reason: 'revoked-denied', end: (r) => r.grants.verdict(A, DENY, undefined) },
    { reason: 'revoked-not-running', end: (r) => r.grants.verdict(A, NOT_RUNNING, undefined) },
    { reason: 'revoked-unknown', end: (r) => r.grants.verdict(A, UNKNOWN, undefined) },
    { reason: 'revoked-admin', end: (r) => void r.grants.revoke({ atespace: 'demo', name: 'a' }, 'revoked-admin') },
  ];
  for (const c of cases) {
    await t.test(c.reason, async (st) => {
      const r = rig(st, () => ALLOW);
      const tunnels = [r.openFor(A, 'api.example.test'), r.openFor(A, 'www.example.test')];
      await c.end(r);
      assert.deepEqual(reasons(tunnels), [c.reason]);
      assert.equal(r.grants.size, 0);
    });
  }
  await t.test('certificate-expired', async (st) => {
    const r = rig(st, () => hostnames(['api.example.test']));
    const tunnels = r.open(A, 2, r.lease(), r.clock.now() + 1500, 'api.example.test');
    await r.advance(TTL * 0.8); // renewed until the NotAfter, no further
    assert.deepEqual(reasons(tunnels), [undefined]);
    await r.advance(1500 - TTL * 0.8);
    assert.deepEqual(reasons(tunnels), ['certificate-expired']);
  });
  await t.test('revalidation-failed', async (st) => {
    const r = rig(st, () => UNAVAILABLE);
    const tunnel = r.openFor(A, 'api.example.test');
    await r.advance(TTL * 0.8);
    await r.advance(TTL * 0.1);
    assert.equal(tunnel.closedWith, undefined, 'open while the lease lasts');
    await r.advance(TTL * 0.1);
    assert.equal(tunnel.closedWith, 'revalidation-failed');
  });
});

test('a CONNECT allowed for a hostname but not yet open when a fresher verdict drops its name is told so; the grant goes on for the others', async (t) => {
  const { openFor, lease, grants, clock } = rig(t, () => ALLOW);
  const kept = openFor(A, 'www.example.test');
  const dialling = grants.hold(A, clock.now() + HOUR, { destination: A.destination, certificatePem: 'a' }, lease(), READ_WITH);
  dialling.allowFor('api.example.test');
  assert.equal(dialling.hostname, 'api.example.test');
  assert.equal(dialling.ended, undefined);
  grants.verdict(A, hostnames(['www.example.test']), lease());
  assert.equal(dialling.ended, 'revoked-denied');
  const late = new FakeTunnel();
  dialling.attach(late);
  assert.equal(late.closedWith, 'revoked-denied', 'a tunnel attached then is closed at once');
  dialling.release();
  assert.equal(kept.closedWith, undefined);
  assert.equal(grants.size, 1, 'the grant is held by the tunnel it kept');
});

test('a CONNECT whose first bytes are being read holds its grant: a revoke ends it, fresher rules decide its name', async (t) => {
  const { openFor, lease, grants, clock } = rig(t, () => ALLOW);
  const question = { destination: A.destination, certificatePem: 'a' };
  const reading = () => grants.hold(A, clock.now() + HOUR, question, lease(), [{ rule: 0, hostnames: ['api.example.test', 'www.example.test'] }]);

  const revoked = reading();
  assert.deepEqual([grants.size, grants.holdsCertificate(A.certDigest)], [1, true], 'held from its 200 on');
  assert.equal(grants.revoke({ atespace: 'demo', name: 'a' }, 'revoked-admin'), 0, 'no tunnel open yet');
  revoked.allowFor('api.example.test');
  assert.equal(revoked.ended, 'revoked-admin', 'its name allowed, but the grant ended while it was read');
  revoked.release();

  const open = openFor(A, 'www.example.test');
  const [dropped, allowed] = [reading(), reading()];
  grants.verdict(A, hostnames(['www.example.test']), lease());
  assert.deepEqual([dropped.ended, allowed.ended, open.closedWith], [undefined, undefined, undefined], 'still being read: kept');
  dropped.allowFor('api.example.test');
  allowed.allowFor('WWW.example.test');
  assert.deepEqual([dropped.ended, allowed.ended], ['revoked-denied', undefined], 'its name judged by the fresher rules');
  dropped.release();
  assert.equal(grants.size, 1);
});

test('the last CONNECT of a grant refused by the fresher rules once its name is read: the grant ends', async (t) => {
  const { lease, grants, clock } = rig(t, () => ALLOW);
  const only = grants.hold(A, clock.now() + HOUR, { destination: A.destination, certificatePem: 'a' }, lease(), READ_WITH);
  grants.verdict(A, hostnames(['www.example.test']), lease());
  only.allowFor('api.example.test');
  assert.equal(only.ended, 'revoked-denied');
  assert.equal(grants.size, 0);
});
