import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replacementDelayMs } from './replacement-delay.js';

test('replacement delay: at once for a death or two, then doubling up to 5 s; old deaths are forgotten', () => {
  const now = 100_000;
  const cases: [string, number[], number][] = [
    ['the first death', [now], 0],
    ['a second within 10 s', [now - 5_000, now], 0],
    ['a third within 10 s: a loop', [now - 6_000, now - 3_000, now], 250],
    ['a fourth', [now - 3, now - 2, now - 1, now], 500],
    ['a fifth', [1, 2, 3, 4].map((d) => now - d).concat(now), 1_000],
    ['many: capped', Array.from({ length: 20 }, (_, i) => now - i), 5_000],
    ['deaths older than the window do not count', [now - 30_000, now - 20_000, now - 10_000, now], 0],
  ];
  for (const [name, deaths, expected] of cases) assert.equal(replacementDelayMs(deaths, now), expected, name);
});
