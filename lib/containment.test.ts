import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Containment, type ContainedOwner } from './containment.js';

type Where = 'a' | 'b';

function setup(): { guard: Containment<Where>; counts: Record<Where, number>; logged: unknown[] } {
  const counts: Record<Where, number> = { a: 0, b: 0 };
  const logged: unknown[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  return { guard: new Containment<Where>({ log, count: (w) => void counts[w]++ }), counts, logged };
}

function owner(requestId?: string): ContainedOwner & { failures: unknown[] } {
  const failures: unknown[] = [];
  return { requestId, failures, fail: (err) => void failures.push(err) };
}

test('a synchronous throw ends its owner alone, counted at where, logged with the request id and stack', () => {
  const { guard, counts, logged } = setup();
  const o = owner('r-1');
  const err = new Error('boom');
  guard.run('a', o, () => {
    throw err;
  });
  assert.deepEqual(o.failures, [err]);
  assert.deepEqual(counts, { a: 1, b: 0 });
  assert.equal(logged.length, 1);
  const line = logged[0] as { requestId: string; where: string; err: { stack: string } };
  assert.equal(line.requestId, 'r-1');
  assert.equal(line.where, 'a');
  assert.match(line.err.stack, /boom/);
});

test('work that does not throw touches nothing', () => {
  const { guard, counts, logged } = setup();
  const o = owner();
  let ran = false;
  guard.run('a', o, () => void (ran = true));
  assert.equal(ran, true);
  assert.deepEqual(o.failures, []);
  assert.deepEqual(counts, { a: 0, b: 0 });
  assert.equal(logged.length, 0);
});

test('a rejection of the promise the work returned is contained the same way', async () => {
  const { guard, counts } = setup();
  const o = owner('r-2');
  guard.run('b', o, async () => {
    await Promise.resolve();
    throw new Error('later');
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(o.failures.length, 1);
  assert.equal(counts.b, 1);
});

test('wrap: a callback registered by contained work runs inside the boundary too', () => {
  const { guard, counts } = setup();
  const o = owner();
  const cb = guard.wrap('a', o, (n: number) => {
    if (n > 1) throw new Error(`n=${n}`);
  });
  cb(1);
  cb(2);
  assert.equal(o.failures.length, 1);
  assert.equal(counts.a, 1);
});

test('the owner is found when the error happens (a request may have its context by then)', () => {
  const { guard } = setup();
  let current: (ContainedOwner & { failures: unknown[] }) | undefined;
  guard.run('a', () => current, () => {
    current = owner('made-during-the-work');
    throw new Error('x');
  });
  assert.equal(current?.failures.length, 1);
});

test('one error through two boundaries is logged and counted once; an owner whose fail throws does not escape', () => {
  const { guard, counts, logged } = setup();
  const err = new Error('once');
  const failing: ContainedOwner = {
    fail: () => {
      throw new Error('could not end it');
    },
  };
  guard.caught('a', failing, err);
  guard.caught('b', undefined, err);
  assert.deepEqual(counts, { a: 1, b: 0 });
  assert.equal(logged.length, 2, 'the error once, and the owner that could not be ended');
  // Values that are not objects are still counted each time (nothing to mark them with).
  guard.caught('b', undefined, 'a string');
  assert.equal(counts.b, 1);
});
