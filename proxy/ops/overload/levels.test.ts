/** The overload state machine as tables: readings → level, and sequences of readings → levels (hysteresis). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anyTrigger, levelOf, nextState, NORMAL, type OverloadState, type Readings, type Triggers } from './levels.js';

const MiB = 2 ** 20;
/** Loop delay: shed misses at 100 ms, everything at 400 ms; heap: 200 MiB and 300 MiB. */
const T: Triggers = { loopDelayMs: { shedMisses: 100, shedAll: 400 }, heapUsedBytes: { shedMisses: 200 * MiB, shedAll: 300 * MiB } };
const r = (loopDelayMs: number, heapMiB: number): Readings => ({ loopDelayMs, heapUsedBytes: heapMiB * MiB });

test('one sample: the highest level any monitor reaches, and the monitor that reached it', () => {
  const rows: [Readings, Triggers, 0 | 1 | 2, string | undefined][] = [
    [r(0, 0), T, 0, undefined],
    [r(99.9, 199), T, 0, undefined],
    [r(100, 0), T, 1, 'loopDelayMs'],
    [r(0, 200), T, 1, 'heapUsedBytes'],
    [r(399, 299), T, 1, 'loopDelayMs'],
    [r(400, 0), T, 2, 'loopDelayMs'],
    [r(150, 300), T, 2, 'heapUsedBytes'],
    [r(5000, 0), { ...T, loopDelayMs: { shedMisses: 0, shedAll: 0 } }, 0, undefined], // loop delay off
    [r(5000, 0), { ...T, loopDelayMs: { shedMisses: 0, shedAll: 400 } }, 2, 'loopDelayMs'], // only the critical trigger on
    [r(150, 0), { ...T, loopDelayMs: { shedMisses: 100, shedAll: 0 } }, 1, 'loopDelayMs'],
    [r(9999, 0), { ...T, loopDelayMs: { shedMisses: 100, shedAll: 0 } }, 1, 'loopDelayMs'], // no shed-all trigger
  ];
  for (const [readings, triggers, level, monitor] of rows) {
    const got = levelOf(readings, triggers);
    assert.equal(got.level, level, JSON.stringify(readings));
    assert.equal(got.cause?.monitor, monitor, JSON.stringify(readings));
  }
  assert.equal(anyTrigger(T), true);
  assert.equal(anyTrigger({ loopDelayMs: { shedMisses: 0, shedAll: 0 }, heapUsedBytes: { shedMisses: 0, shedAll: 0 } }), false);
});

/** Steps the machine through `readings` from `normal`, returning the level after each sample. */
function levels(readings: readonly Readings[]): number[] {
  let s: OverloadState = NORMAL;
  return readings.map((x) => (s = nextState(s, x, T)).level);
}

test('sequences of samples: two in a row to go up, four calm ones per step down, a 90 % band against flapping', () => {
  const ok = r(0, 50);
  const busy = r(150, 50); // shed-misses
  const jammed = r(500, 50); // shed-all
  const band = r(95, 50); // below the 100 ms threshold, above 90 % of it
  const rows: [string, Readings[], number[]][] = [
    ['quiet', [ok, ok, ok], [0, 0, 0]],
    ['one long pause is not an overload', [busy, ok, busy, ok], [0, 0, 0, 0]],
    ['two samples in a row are', [busy, busy, busy], [0, 1, 1]],
    ['up to shed-all directly', [jammed, jammed], [0, 2]],
    ['a demand that varies between levels still rises, to the latest', [busy, jammed], [0, 2]],
    ['down after four calm samples', [busy, busy, ok, ok, ok, ok, ok], [0, 1, 1, 1, 1, 0, 0]],
    ['a busy sample restarts the calm count', [busy, busy, ok, ok, ok, busy, ok, ok, ok, ok], [0, 1, 1, 1, 1, 1, 1, 1, 1, 0]],
    ['within the band the level holds (no flapping)', [busy, busy, band, band, band, band, band, band], [0, 1, 1, 1, 1, 1, 1, 1]],
    ['below the band it drops', [busy, busy, band, ok, ok, ok, ok], [0, 1, 1, 1, 1, 1, 0]],
    ['shed-all steps down through shed-misses', [jammed, jammed, ok, ok, ok, ok, ok, ok, ok, ok], [0, 2, 2, 2, 2, 1, 1, 1, 1, 0]],
    ['from shed-all, a reading still at shed-misses stops at shed-misses', [jammed, jammed, busy, busy, busy, busy, busy, busy], [0, 2, 2, 2, 2, 1, 1, 1]],
    ['a second rise from shed-misses needs two samples again', [busy, busy, jammed, jammed], [0, 1, 1, 2]],
  ];
  for (const [name, readings, expected] of rows) assert.deepEqual(levels(readings), expected, name);
});

test('the cause names what set the level, and is gone at normal', () => {
  let s = nextState(NORMAL, r(0, 250), T);
  s = nextState(s, r(0, 250), T);
  assert.deepEqual(s.cause, { monitor: 'heapUsedBytes', reading: 250 * MiB, threshold: 200 * MiB });
  for (let i = 0; i < 4; i++) s = nextState(s, r(0, 10), T);
  assert.equal(s.level, 0);
  assert.equal(s.cause, undefined);
});
