import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from './config.js';
import { CONTROL_ARM, MAX_WARMUP_WINDOWS, ratiosOf, sideBySideArms, warmUp } from './side-by-side.js';

test('ratiosOf: every arm to the first, C to floor-ingress when both ran, another build and the control to C', () => {
  const rounds = [
    { floor: 50, 'floor-ingress': 52, C: 60, 'C@old': 57, [CONTROL_ARM]: 61 },
    { floor: 100, 'floor-ingress': 104, C: 120, 'C@old': 114, [CONTROL_ARM]: 119 },
  ];
  const cases: { arms: string[]; pairs: string[] }[] = [
    { arms: ['floor', 'C'], pairs: ['C/floor'] },
    { arms: ['floor', 'floor-ingress', 'C'], pairs: ['floor-ingress/floor', 'C/floor', 'C/floor-ingress'] },
    { arms: ['floor-ingress', 'C'], pairs: ['C/floor-ingress'] },
    { arms: ['floor', 'floor-ingress'], pairs: ['floor-ingress/floor'] },
    { arms: ['floor', 'C', 'C@old', CONTROL_ARM], pairs: ['C/floor', 'C@old/floor', `${CONTROL_ARM}/floor`, 'C@old/C', `${CONTROL_ARM}/C`] },
  ];
  for (const c of cases) {
    const got = ratiosOf(rounds, c.arms);
    assert.deepEqual(got.map((r) => `${r.arm}/${r.base}`), c.pairs, c.arms.join(','));
  }
  const ingress = ratiosOf(rounds, ['floor', 'floor-ingress', 'C']).find((r) => r.arm === 'C' && r.base === 'floor-ingress');
  assert.ok(ingress !== undefined && Math.abs(ingress.mean - (60 / 52 + 120 / 104) / 2) < 1e-12, 'taken round by round');
});

test('warmUp: windows repeat until every arm answered in the same one', async () => {
  const answers: Record<string, number[]> = { floor: [40, 50, 50], C: [0, 0, 30] };
  const calls: Record<string, number> = { floor: 0, C: 0 };
  const logged: string[] = [];
  const windows = await warmUp(
    [{ name: 'floor' }, { name: 'C' }],
    async (e) => ({ requests: answers[e.name]![calls[e.name]!++]! }),
    (m) => logged.push(m),
  );
  assert.equal(windows, 3);
  assert.deepEqual(calls, { floor: 3, C: 3 }, 'every arm is loaded in every window, not only the silent one');
  assert.deepEqual(logged, ['warm-up window 1: C answered nothing yet; warming up again', 'warm-up window 2: C answered nothing yet; warming up again']);
});

test('warmUp: one window when every arm answers; an arm that never answers stops it after the last window', async () => {
  assert.equal(await warmUp([{ name: 'floor' }, { name: 'C' }], async () => ({ requests: 1 }), () => undefined), 1);
  let loads = 0;
  const windows = await warmUp([{ name: 'floor' }, { name: 'C' }], async (e) => {
    loads++;
    return { requests: e.name === 'C' ? 0 : 10 };
  }, () => undefined);
  assert.equal(windows, MAX_WARMUP_WINDOWS);
  assert.equal(loads, 2 * MAX_WARMUP_WINDOWS);
});

test('side-by-side: arms it cannot load the same way, or fewer than two, are refused before anything starts', () => {
  const arms = (argv: string[]) => sideBySideArms(buildConfig(['--scenario', 'side-by-side', ...argv]).config).map((a) => a.name);
  assert.deepEqual(arms([]), ['floor', 'C']);
  assert.deepEqual(arms(['--arms', 'C', '--control']), ['C', 'C copy']);
  assert.deepEqual(arms(['--arms', 'floor', '--compare-build', '/srv/old-build']), ['floor', 'C@old-build']);
  assert.deepEqual(arms(['--compare-build', '/srv/9d73722', '--compare-build', '/srv/main']), ['floor', 'C', 'C@9d73722', 'C@main']);
  assert.throws(() => arms(['--compare-build', '/a/old', '--compare-build', '/b/old']), /both run as arm C@old/);
  assert.throws(() => arms(['--arms', 'C']), /at least two arms/);
  assert.throws(() => arms(['--arms', 'floor,C-h2c']), /C-h2c cannot run side by side/);
  assert.throws(() => arms(['--arms', 'floor,fleet-rr']), /fleet-rr cannot run side by side/);
});
