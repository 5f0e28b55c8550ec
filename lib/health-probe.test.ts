/**
 * The health probe's timing on a clock driven by hand: when checks start, when one failure and two in a row change
 * the state, how long a killed or hung dependency takes to fail readiness and to pass it again. (Against a real gRPC
 * server: grpc-health.test.ts; with real processes and signals: proxy/e2e/readiness.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthProbe, type CheckState } from './health-probe.js';
import { ManualClock } from './testing/manual-clock.js';
import { fakeHealthDependency, probeWorstCase } from './testing/fake-health.js';

function setup(intervalMs: number, timeoutMs: number) {
  const clock = new ManualClock(0);
  const dependency = fakeHealthDependency(clock, timeoutMs);
  const changes: { kind: CheckState['kind']; at: number }[] = [];
  const probe = new HealthProbe({
    name: 'dependency 127.0.0.1:1',
    client: dependency.client,
    service: '',
    intervalMs,
    timeoutMs,
    clock,
    onChange: (s) => changes.push({ kind: s.kind, at: clock.now() }),
  });
  return { clock, dependency, probe, changes };
}

test('a refused dependency: one failed check changes nothing, the second (one interval later) fails readiness, dated from the first; the next good answer passes it', async () => {
  const { clock, dependency, probe, changes } = setup(1000, 1000);
  probe.start();
  await clock.advance(0);
  assert.deepEqual(changes, [{ kind: 'ok', at: 0 }], 'the first answer decides at once');
  await clock.advance(300);
  dependency.set('refusing');
  await clock.advance(700); // the check at 1000
  assert.deepEqual([probe.state().kind, probe.counts.failed, dependency.checks], ['ok', 1, 2], 'one failure is not an outage');
  await clock.advance(999);
  assert.equal(probe.state().kind, 'ok');
  assert.equal(dependency.checks, 2, 'no check between two intervals');
  await clock.advance(1); // the check at 2000
  const failing = probe.state();
  assert.equal(failing.kind, 'failing');
  assert.equal(failing.kind === 'failing' && failing.since, 1000, 'since the first failure of the run');
  assert.match(failing.kind === 'failing' ? failing.reason : '', /^dependency 127\.0\.0\.1:1: unreachable \(.*ECONNREFUSED\)$/);
  await clock.advance(300);
  dependency.set('serving');
  await clock.advance(699);
  assert.equal(probe.state().kind, 'failing');
  await clock.advance(1); // the check at 3000
  assert.deepEqual(changes, [{ kind: 'ok', at: 0 }, { kind: 'failing', at: 2000 }, { kind: 'ok', at: 3000 }]);
  assert.deepEqual(probe.counts, { ok: 2, failed: 2 });
  probe.stop();
});

test('a hung dependency: each check waits out its timeout, the next starts at once when one took longer than the interval; answered at once when it continues', async () => {
  const { clock, dependency, probe, changes } = setup(500, 1000);
  probe.start();
  await clock.advance(100);
  dependency.set('hung');
  await clock.advance(400); // the check at 500 waits
  assert.equal(dependency.checks, 2);
  await clock.advance(999);
  assert.deepEqual([probe.state().kind, probe.counts.failed], ['ok', 0], 'no answer yet is not a failure yet');
  await clock.advance(1); // 1500: its deadline, and the next check at once
  assert.deepEqual([probe.state().kind, probe.counts.failed, dependency.checks], ['ok', 1, 3]);
  await clock.advance(1000); // 2500: the second deadline
  const failing = probe.state();
  assert.equal(failing.kind === 'failing' && failing.reason, 'dependency 127.0.0.1:1: no answer to a health check within 1000 ms');
  assert.equal(failing.kind === 'failing' && failing.since, 1500);
  assert.equal(dependency.checks, 4, 'the next check started at once');
  await clock.advance(100);
  dependency.set('serving'); // the waiting check is answered
  await clock.advance(0);
  assert.deepEqual(changes.map((c) => [c.kind, c.at]), [['ok', 0], ['failing', 2500], ['ok', 2600]]);
  probe.stop();
});

test('settled() waits for the first answer, at most maxWaitMs of clock time; a stopped probe checks no more', async () => {
  const { clock, dependency, probe } = setup(1000, 5000);
  dependency.set('hung');
  probe.start();
  let settled = false;
  void probe.settled(2000).then(() => (settled = true));
  await clock.advance(1999);
  assert.equal(settled, false);
  await clock.advance(1);
  assert.equal(settled, true);
  assert.equal(probe.state().kind, 'pending');
  dependency.set('serving');
  await clock.advance(0);
  assert.equal(probe.state().kind, 'ok');
  const checks = dependency.checks;
  probe.stop();
  await clock.advance(60_000);
  assert.equal(dependency.checks, checks, 'a stopped probe checks no more');
  assert.equal(clock.pending, 0, 'and leaves no timer behind');
});

test('the bounds the design states: killed → failing within two intervals, hung within interval + max(interval, timeout) + timeout, back within one interval', async () => {
  for (const [intervalMs, timeoutMs] of [[1000, 1000], [100, 300], [500, 200]] as const) {
    const t = await probeWorstCase(intervalMs, timeoutMs);
    const what = `interval ${intervalMs}, timeout ${timeoutMs}: ${JSON.stringify(t)}`;
    // The worst case is a fault just after a check was answered.
    assert.equal(t.killed, 2 * intervalMs, what);
    assert.equal(t.hung, intervalMs + Math.max(intervalMs, timeoutMs) + timeoutMs, what);
    assert.ok(t.backFromKilled <= intervalMs && t.backFromHung <= intervalMs, what);
  }
});
