import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MissFlights, type WaitEnd } from './miss-flights.js';

function clock(start = 1000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

test('the first miss leads; later misses for the same actor find its flight; other actors are separate', () => {
  const flights = new MissFlights({ waitTimeoutMs: 1000, clock: clock() });
  assert.equal(flights.inFlight('demo/a'), undefined);
  const f = flights.lead('demo/a');
  assert.equal(flights.inFlight('demo/a'), f);
  assert.equal(flights.inFlight('demo/b'), undefined);
  assert.equal(flights.size, 1);
  flights.settle(f, true);
  assert.equal(flights.inFlight('demo/a'), undefined, 'a settled flight is gone');
  assert.equal(flights.size, 0);
});

// How the leader ends → what every follower gets.
for (const [learned, expected] of [
  [true, 'learned'],
  [false, 'failed'],
] as const) {
  test(`a leader that settles ${learned ? 'having learned' : 'without a binding'} releases every follower with "${expected}"`, async () => {
    const flights = new MissFlights({ waitTimeoutMs: 1000, clock: clock() });
    const f = flights.lead('demo/a');
    const waits = [flights.follow(f, undefined), flights.follow(f, undefined), flights.follow(f, new AbortController().signal)];
    assert.equal(f.waiting, 3);
    flights.settle(f, learned);
    flights.settle(f, !learned); // a second settle changes nothing
    assert.deepEqual(await Promise.all(waits), [expected, expected, expected]);
    assert.equal(flights.stats().waits, 3);
  });
}

test('a follower whose client leaves stops waiting at once and leaves the flight', async () => {
  const flights = new MissFlights({ waitTimeoutMs: 1000, clock: clock() });
  const f = flights.lead('demo/a');
  const client = new AbortController();
  const gone = flights.follow(f, client.signal);
  const stays = flights.follow(f, undefined);
  client.abort();
  assert.equal(await gone, 'gone');
  assert.equal(f.waiting, 1, 'no listener or waiter left behind');
  const already = new AbortController();
  already.abort();
  assert.equal(await flights.follow(f, already.signal), 'gone', 'a client already gone never waits');
  flights.settle(f, true);
  assert.equal(await stays, 'learned');
});

test('followers wait at most the timeout: then they are released and the next miss leads a new flight', async () => {
  const c = clock();
  const flights = new MissFlights({ waitTimeoutMs: 20, clock: c });
  const f = flights.lead('demo/a');
  // The flight's timer is unref'd (it never holds the proxy open): keep this test's event loop alive while it waits.
  const keepAlive = setInterval(() => undefined, 1000);
  const end: WaitEnd = await flights.follow(f, undefined).finally(() => clearInterval(keepAlive)); // the real timer fires
  assert.equal(end, 'timeout');
  assert.equal(f.ended, true);
  assert.equal(flights.inFlight('demo/a'), undefined);
  const next = flights.lead('demo/a');
  flights.settle(f, true); // the slow old leader settles late: the new flight is untouched
  assert.equal(flights.inFlight('demo/a'), next);
});

test('a flight past its deadline is not joined even before its timer fired (a leader that never settles holds no one)', () => {
  const c = clock();
  const flights = new MissFlights({ waitTimeoutMs: 1000, clock: c });
  const f = flights.lead('demo/a');
  c.advance(1000);
  assert.equal(flights.inFlight('demo/a'), undefined);
  assert.equal(f.ended, true);
  assert.throws(() => new MissFlights({ waitTimeoutMs: 0 }), RangeError);
});

test('results are counted for /stats (resettable) and for metrics (lifetime)', () => {
  const flights = new MissFlights({ waitTimeoutMs: 1000 });
  flights.count('hit');
  flights.count('alone');
  flights.count('gone');
  flights.resetStats();
  flights.count('hit');
  assert.deepEqual(flights.stats(), { waits: 0, hit: 1, alone: 0, gone: 0 });
  assert.deepEqual(flights.lifetimeStats(), { waits: 0, hit: 2, alone: 1, gone: 1 });
});
