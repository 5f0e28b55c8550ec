import assert from 'node:assert/strict';
import { test } from 'node:test';
import { untilEmpty } from './until-empty.js';

test('untilEmpty: true when the owner reports empty before the timeout, false at the timeout; the callback is handed back either way', async () => {
  let held: (() => void) | undefined;
  const emptied = untilEmpty(60_000, (cb) => (held = cb));
  assert.ok(held !== undefined, 'the owner holds the callback during the wait');
  held();
  assert.equal(await emptied, true);
  assert.equal(held, undefined, 'cleared once the wait is over');

  const timedOut = untilEmpty(5, (cb) => (held = cb));
  assert.ok(held !== undefined);
  assert.equal(await timedOut, false);
  assert.equal(held, undefined, 'cleared at the timeout, so a late empty does nothing');
});
