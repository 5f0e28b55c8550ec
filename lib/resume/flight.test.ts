import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { ResumeFlights, type ResumeFlightsOptions } from './flight.js';
import { backoffSequence } from './backoff.js';
import { RUNNING_STATUS, type AttemptResult, type ControlActor } from './control-client.js';
import type { ActorRef } from '../actor-ref.js';

const REF: ActorRef = { atespace: 'team-a', name: 'counter-7' };
const KEY = 'team-a/counter-7';

function actor(ip: string, status = RUNNING_STATUS): ControlActor {
  return { actor_id: KEY, version: '1', status, ateom_pod_ip: ip, atespace: 'team-a' };
}
const ok = (ip = '10.0.0.1', resumed?: boolean): AttemptResult => ({ kind: 'ok', actor: actor(ip), resumed });
const err = (code: grpc.status, details = ''): AttemptResult => ({ kind: 'error', code, details });

/** An attempt function whose calls the test answers one by one. */
function gated(): { attempt: ResumeFlightsOptions['attempt']; calls: ((r: AttemptResult) => void)[]; waitCalls(n: number): Promise<void> } {
  const calls: ((r: AttemptResult) => void)[] = [];
  const watchers: (() => void)[] = [];
  return {
    calls,
    attempt: () =>
      new Promise<AttemptResult>((resolve) => {
        calls.push(resolve);
        for (const w of watchers.splice(0)) w();
      }),
    async waitCalls(n) {
      while (calls.length < n) await new Promise<void>((r) => watchers.push(r));
    },
  };
}

function scripted(answers: AttemptResult[]): { attempt: ResumeFlightsOptions['attempt']; count: () => number } {
  let n = 0;
  return {
    attempt: async () => answers[Math.min(n++, answers.length - 1)]!,
    count: () => n,
  };
}

const FAST = { initialMs: 5, factor: 1.1, jitter: 0.1 };

test('concurrent callers share one call; the leader is triggered, the others joined', async () => {
  const g = gated();
  let joins = 0;
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000, observer: { join: () => joins++ } });
  const all = Array.from({ length: 10 }, () => flights.resolve(REF, KEY));
  await g.waitCalls(1);
  assert.equal(flights.inFlight, 1);
  g.calls[0]!(ok('10.0.0.9'));
  const outcomes = await Promise.all(all);
  assert.equal(g.calls.length, 1);
  assert.equal(joins, 9);
  assert.deepEqual(outcomes.map((o) => (o.kind === 'ok' ? `${o.ip}/${o.resume}` : o.kind)), [
    '10.0.0.9/triggered',
    ...Array(9).fill('10.0.0.9/joined'),
  ]);
  assert.equal(flights.inFlight, 0);
});

test('resumed=false (already running) is reported as resume "none"', async () => {
  const flights = new ResumeFlights({ attempt: scripted([ok('10.0.0.1', false)]).attempt, budgetMs: 1000 });
  const o = await flights.resolve(REF, KEY);
  assert.equal(o.kind === 'ok' && o.resume, 'none');
});

test('a completed flight is forgotten: the next caller starts a fresh call', async () => {
  const s = scripted([ok('10.0.0.1'), ok('10.0.0.2')]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 1000 });
  const a = await flights.resolve(REF, KEY);
  const b = await flights.resolve(REF, KEY);
  assert.equal(s.count(), 2);
  assert.equal(a.kind === 'ok' && a.ip, '10.0.0.1');
  assert.equal(b.kind === 'ok' && b.ip, '10.0.0.2');
});

test('a caller going away gets cancelled; the call carries on and serves the others', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000 });
  const abort = new AbortController();
  const leaving = flights.resolve(REF, KEY, abort.signal);
  const staying = flights.resolve(REF, KEY);
  await g.waitCalls(1);
  abort.abort();
  assert.deepEqual(await leaving, { kind: 'cancelled' });
  assert.equal(flights.inFlight, 1, 'the flight is still under way');
  g.calls[0]!(ok());
  assert.equal((await staying).kind, 'ok');
  assert.equal(g.calls.length, 1);
});

test('the flight runs on after every caller left, and is not joined after it completes', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000 });
  const abort = new AbortController();
  const p = flights.resolve(REF, KEY, abort.signal);
  await g.waitCalls(1);
  abort.abort();
  await p;
  g.calls[0]!(ok());
  await new Promise((r) => setImmediate(r));
  assert.equal(flights.inFlight, 0);
  const next = flights.resolve(REF, KEY);
  await g.waitCalls(2);
  g.calls[1]!(ok());
  assert.equal((await next).kind, 'ok');
});

test('ABORTED is retried with backoff until success', async () => {
  const s = scripted([err(grpc.status.ABORTED, 'lease'), err(grpc.status.ABORTED, 'lease'), ok()]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, backoff: FAST });
  assert.equal((await flights.resolve(REF, KEY)).kind, 'ok');
  assert.equal(s.count(), 3);
});

test('UNAVAILABLE is retried with backoff until success, with or without parking', async () => {
  for (const parking of [undefined, { budgetMs: 2000 }]) {
    const s = scripted([err(grpc.status.UNAVAILABLE, 'control plane down'), err(grpc.status.UNAVAILABLE, 'control plane down'), ok()]);
    const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, backoff: FAST, ...(parking ? { parking } : {}) });
    assert.equal((await flights.resolve(REF, KEY)).kind, 'ok');
    assert.equal(s.count(), 3);
    assert.equal(flights.lot.active, 0);
  }
});

test('without parking, RESOURCE_EXHAUSTED and FAILED_PRECONDITION fail fast', async () => {
  for (const code of [grpc.status.RESOURCE_EXHAUSTED, grpc.status.FAILED_PRECONDITION, grpc.status.NOT_FOUND]) {
    const s = scripted([err(code, 'x'), ok()]);
    const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, backoff: FAST });
    assert.deepEqual(await flights.resolve(REF, KEY), { kind: 'grpc-error', code, details: 'x', budgetExhausted: false });
    assert.equal(s.count(), 1);
  }
});

test('with parking, those codes are retried until success; slots are released afterwards', async () => {
  for (const code of [grpc.status.RESOURCE_EXHAUSTED, grpc.status.UNAVAILABLE, grpc.status.FAILED_PRECONDITION]) {
    const s = scripted([err(code), err(code), ok()]);
    const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, parking: { budgetMs: 2000 }, parkedMax: 10, backoff: FAST });
    const outcomes = await Promise.all([flights.resolve(REF, KEY), flights.resolve(REF, KEY)]);
    assert.deepEqual(outcomes.map((o) => o.kind), ['ok', 'ok']);
    assert.equal(s.count(), 3);
    assert.equal(flights.lot?.active, 0);
  }
});

test('NOT_FOUND is never retried, even with parking', async () => {
  const s = scripted([err(grpc.status.NOT_FOUND), ok()]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, parking: { budgetMs: 2000 }, parkedMax: 10, backoff: FAST });
  assert.equal((await flights.resolve(REF, KEY)).kind, 'grpc-error');
  assert.equal(s.count(), 1);
});

test('budget exhausted while still retryable: callers get the real error', async () => {
  const s = scripted([err(grpc.status.RESOURCE_EXHAUSTED, 'no free workers available')]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, parking: { budgetMs: 150 }, parkedMax: 10, backoff: FAST });
  assert.equal(flights.budgetMs, 150, 'with parking, the smaller budget applies');
  const o = await flights.resolve(REF, KEY);
  assert.deepEqual(o, { kind: 'grpc-error', code: grpc.status.RESOURCE_EXHAUSTED, details: 'no free workers available', budgetExhausted: true });
  // Retries until a real-time budget runs out: how many fit depends on the timers, so only "retried" is exact.
  assert.ok(s.count() >= 2, `${s.count()} calls`);
  assert.equal(flights.lot?.active, 0);
});

test('budget exhausted with the first call unanswered: timeout, and the call is left running', async () => {
  const g = gated();
  const results: AttemptResult[] = [];
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 50, observer: { attempt: (r) => results.push(r) } });
  assert.deepEqual(await flights.resolve(REF, KEY), { kind: 'timeout' });
  assert.equal(flights.inFlight, 0, 'forgotten at the budget, so the next request starts afresh');
  g.calls[0]!(ok());
  await new Promise((r) => setImmediate(r));
  assert.equal(results.length, 1, 'the late answer is still observed');
});

test('a full lot sheds callers of a retrying flight at once; a flight that is not retrying takes no slot', async () => {
  const a = gated();
  const flights = new ResumeFlights({
    attempt: (ref) => (ref.name === 'a' ? a.attempt(ref) : Promise.resolve(ok('10.0.0.3'))),
    budgetMs: 5000,
    parking: { budgetMs: 5000 },
    parkedMax: 1,
    backoff: { initialMs: 100, factor: 1, jitter: 0 },
  });
  const first = flights.resolve({ atespace: 'ns', name: 'a' }, 'ns/a');
  await a.waitCalls(1);
  assert.equal(flights.lot?.active, 0, 'no slot before the flight retries');
  a.calls[0]!(err(grpc.status.RESOURCE_EXHAUSTED, 'no free workers available'));
  await new Promise((r) => setImmediate(r));
  assert.equal(flights.lot?.active, 1);
  // A second caller of the same retrying flight needs a slot too: shed at once.
  assert.deepEqual(await flights.resolve({ atespace: 'ns', name: 'a' }, 'ns/a'), { kind: 'lot-full' });
  assert.equal(flights.lot?.rejected, 1);
  // A running actor is served while the lot is full.
  assert.equal((await flights.resolve({ atespace: 'ns', name: 'c' }, 'ns/c')).kind, 'ok');
  // The retry succeeds: the parked caller is served and its slot released.
  await a.waitCalls(2);
  a.calls[1]!(ok('10.0.0.4'));
  const served = await first;
  assert.equal(served.kind === 'ok' && served.ip, '10.0.0.4');
  assert.equal(flights.lot?.active, 0);
});

test('callers already waiting when the flight starts retrying are shed beyond the lot size', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000, parking: { budgetMs: 5000 }, parkedMax: 2, backoff: FAST });
  const all = Array.from({ length: 4 }, () => flights.resolve(REF, KEY));
  await g.waitCalls(1);
  g.calls[0]!(err(grpc.status.UNAVAILABLE));
  await g.waitCalls(2);
  assert.equal(flights.lot?.active, 2);
  g.calls[1]!(ok());
  const kinds = (await Promise.all(all)).map((o) => o.kind).sort();
  assert.deepEqual(kinds, ['lot-full', 'lot-full', 'ok', 'ok']);
  assert.equal(flights.lot?.active, 0);
});

test('a parked caller that goes away frees its slot', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000, parking: { budgetMs: 5000 }, parkedMax: 1, backoff: FAST });
  const abort = new AbortController();
  const p = flights.resolve(REF, KEY, abort.signal);
  await g.waitCalls(1);
  g.calls[0]!(err(grpc.status.RESOURCE_EXHAUSTED));
  await g.waitCalls(2);
  assert.equal(flights.lot?.active, 1);
  abort.abort();
  assert.equal((await p).kind, 'cancelled');
  assert.equal(flights.lot?.active, 0);
  g.calls[1]!(ok());
});

test("a caller's own budget: answered with the last retryable error once no retry can start within it; the flight carries on for the others", async () => {
  const g = gated();
  let outOfBudget = 0;
  const retried: grpc.status[] = [];
  const flights = new ResumeFlights({
    attempt: g.attempt,
    budgetMs: 5000,
    backoff: { initialMs: 100, factor: 1, jitter: 0 },
    observer: { outOfBudget: () => outOfBudget++, retry: (code) => retried.push(code) },
  });
  const short = flights.resolve(REF, KEY, undefined, 50);
  const long = flights.resolve(REF, KEY, undefined, 4000);
  const unbounded = flights.resolve(REF, KEY);
  await g.waitCalls(1);
  g.calls[0]!(err(grpc.status.UNAVAILABLE, 'control plane down'));
  // The next retry starts 100 ms from now: after the short caller's budget, so it is answered at once.
  assert.deepEqual(await short, { kind: 'grpc-error', code: grpc.status.UNAVAILABLE, details: 'control plane down', budgetExhausted: true });
  assert.equal(outOfBudget, 1);
  await g.waitCalls(2);
  assert.deepEqual(retried, [grpc.status.UNAVAILABLE]);
  g.calls[1]!(ok('10.0.0.7'));
  for (const o of await Promise.all([long, unbounded])) assert.equal(o.kind === 'ok' && o.ip, '10.0.0.7');
  assert.equal(flights.lot.active, 0, 'every parked caller left the lot');
});

test('the call under way is waited for past a caller\'s budget: the budget only bounds retries', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000, backoff: FAST });
  const p = flights.resolve(REF, KEY, undefined, 1);
  await g.waitCalls(1);
  await new Promise((r) => setTimeout(r, 20)); // the caller's budget is long gone
  g.calls[0]!(ok('10.0.0.8'));
  const o = await p;
  assert.equal(o.kind === 'ok' && o.ip, '10.0.0.8');
});

test('a flight nobody waits for any more is not retried, and is forgotten', async () => {
  const s = scripted([err(grpc.status.UNAVAILABLE, 'down'), ok()]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 5000, backoff: FAST });
  const o = await flights.resolve(REF, KEY, undefined, 0);
  assert.deepEqual(o, { kind: 'grpc-error', code: grpc.status.UNAVAILABLE, details: 'down', budgetExhausted: true });
  await new Promise((r) => setTimeout(r, 30)); // several backoffs
  assert.equal(s.count(), 1, 'no retry with no caller');
  assert.equal(flights.inFlight, 0);
});

test('without parking the lot still caps the callers of retrying flights: past it they are answered at once', async () => {
  const g = gated();
  const flights = new ResumeFlights({ attempt: g.attempt, budgetMs: 5000, parkedMax: 1, backoff: { initialMs: 50, factor: 1, jitter: 0 } });
  const a = flights.resolve({ atespace: 'ns', name: 'a' }, 'ns/a');
  const b = flights.resolve({ atespace: 'ns', name: 'b' }, 'ns/b');
  await g.waitCalls(2);
  g.calls[0]!(err(grpc.status.UNAVAILABLE, 'down'));
  g.calls[1]!(err(grpc.status.UNAVAILABLE, 'down'));
  const shed = await Promise.race([a, b]);
  assert.deepEqual(shed, { kind: 'lot-full' });
  assert.equal(flights.lot.active, 1);
  assert.equal(flights.lot.rejected, 1);
  await g.waitCalls(3);
  g.calls[2]!(ok('10.0.0.9'));
  const kinds = (await Promise.all([a, b])).map((o) => o.kind).sort();
  assert.deepEqual(kinds, ['lot-full', 'ok']);
  assert.equal(flights.lot.active, 0);
});

test('success requires RUNNING and a valid IP', async () => {
  const notRunning = new ResumeFlights({ attempt: async () => ({ kind: 'ok', actor: actor('10.0.0.1', 'STATUS_SUSPENDED'), resumed: true }), budgetMs: 100 });
  assert.deepEqual(await notRunning.resolve(REF, KEY), { kind: 'unroutable', reason: 'not-running', status: 'STATUS_SUSPENDED' });
  for (const ip of ['', 'worker-1', '10.0.0', '999.1.1.1']) {
    const badIp = new ResumeFlights({ attempt: async () => ({ kind: 'ok', actor: actor(ip), resumed: true }), budgetMs: 100 });
    assert.equal((await badIp.resolve(REF, KEY)).kind, 'unroutable', ip);
  }
  const v6 = new ResumeFlights({ attempt: async () => ok('fd00::7'), budgetMs: 100 });
  const o = await v6.resolve(REF, KEY);
  assert.equal(o.kind === 'ok' && o.ip, 'fd00::7');
});

test('an already-aborted signal is cancelled without a call', async () => {
  const s = scripted([ok()]);
  const flights = new ResumeFlights({ attempt: s.attempt, budgetMs: 100 });
  assert.equal((await flights.resolve(REF, KEY, AbortSignal.abort())).kind, 'cancelled');
  assert.equal(s.count(), 0);
});

test('backoff grows by the factor with up to `jitter` extra, without a cap', () => {
  const low = backoffSequence({ initialMs: 100, factor: 1.1, jitter: 0.1 }, () => 0);
  assert.deepEqual([low(), low(), low()].map((v) => Math.round(v * 1000) / 1000), [100, 110, 121]);
  const high = backoffSequence({ initialMs: 100, factor: 1.1, jitter: 0.1 }, () => 1);
  assert.deepEqual([high(), high()].map((v) => Math.round(v * 1000) / 1000), [110, 121]);
  const long = backoffSequence({ initialMs: 100, factor: 1.1, jitter: 0 }, () => 0);
  let last = 0;
  for (let i = 0; i < 60; i++) last = long();
  assert.ok(last > 10_000);
});
