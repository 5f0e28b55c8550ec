import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ejectionReason,
  FORGET_AFTER_MS,
  OutlierDetector,
  PROBE_BASE_MS,
  PROBE_MAX_MS,
  probeDelayMs,
  transition,
  UP,
  type AddressHealth,
  type HealthAction,
  type HealthEvent,
} from './outliers.js';
import { Counters } from '../ops/stats.js';

const down = (over: Partial<Extract<AddressHealth, { kind: 'down' }>> = {}): AddressHealth => ({
  kind: 'down',
  reason: 'refused',
  since: 1000,
  lastRoutedAt: 1000,
  failedProbes: 0,
  ...over,
});

test('the outlier state machine, as a table', () => {
  const rows: [string, AddressHealth, HealthEvent, number, AddressHealth, HealthAction][] = [
    ['up, a connect fails: down, the first probe after the base delay', UP, { kind: 'connect-failed', reason: 'refused' }, 1000, down(), { kind: 'eject', reason: 'refused', probeInMs: PROBE_BASE_MS }],
    ['up, a TLS handshake times out: down for timeout', UP, { kind: 'connect-failed', reason: 'timeout' }, 1000, down({ reason: 'timeout' }), { kind: 'eject', reason: 'timeout', probeInMs: PROBE_BASE_MS }],
    ['up, routed by the cache: send', UP, { kind: 'routed', source: 'cache' }, 1000, UP, { kind: 'dispatch', readmitted: false }],
    ['up, routed by ext_proc: send', UP, { kind: 'routed', source: 'extproc' }, 1000, UP, { kind: 'dispatch', readmitted: false }],
    ['up, a late probe result: nothing', UP, { kind: 'probe', ok: false }, 1000, UP, { kind: 'none' }],
    ['down, another connect fails (it was under way): nothing more', down(), { kind: 'connect-failed', reason: 'refused' }, 1100, down(), { kind: 'none' }],
    ['down, the cache routes there: fail fast, never sent', down(), { kind: 'routed', source: 'cache' }, 1500, down({ lastRoutedAt: 1500 }), { kind: 'fail-fast' }],
    ['down, ext_proc names it again (a resume): let back and send', down(), { kind: 'routed', source: 'extproc' }, 1500, UP, { kind: 'dispatch', readmitted: true }],
    ['down, the apiserver resolver names it again: let back and send', down(), { kind: 'routed', source: 'apiserver' }, 1500, UP, { kind: 'dispatch', readmitted: true }],
    ['down, a probe connects: let back', down(), { kind: 'probe', ok: true }, 1300, UP, { kind: 'readmit' }],
    ['down, a probe fails: probe again, twice the wait', down(), { kind: 'probe', ok: false }, 1300, down({ failedProbes: 1 }), { kind: 'probe-again', probeInMs: 2 * PROBE_BASE_MS }],
    ['down, many probes failed: the wait stops growing', down({ failedProbes: 20 }), { kind: 'probe', ok: false }, 2000, down({ failedProbes: 21 }), { kind: 'probe-again', probeInMs: PROBE_MAX_MS }],
    ['down and unused for a minute, a probe fails: forgotten', down(), { kind: 'probe', ok: false }, 1000 + FORGET_AFTER_MS, UP, { kind: 'forget' }],
    ['down, used recently, a probe fails: kept', down({ lastRoutedAt: 50_000 }), { kind: 'probe', ok: false }, 1000 + FORGET_AFTER_MS, down({ lastRoutedAt: 50_000, failedProbes: 1 }), { kind: 'probe-again', probeInMs: 2 * PROBE_BASE_MS }],
  ];
  for (const [name, health, event, now, wantHealth, wantAction] of rows) {
    const got = transition(health, event, now, 0);
    assert.deepEqual(got, { health: wantHealth, action: wantAction }, name);
  }
});

test('probe delays double from the base up to the cap, with at most 20 % jitter', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((n) => probeDelayMs(n, 0)), [200, 400, 800, 1600, 3200, 5000, 5000]);
  assert.equal(probeDelayMs(0, 0.999), 240);
  assert.equal(probeDelayMs(99, 0.5), 5500);
});

test('ejection reasons from connect error codes', () => {
  const rows: [string, string][] = [
    ['ECONNREFUSED', 'refused'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['ETIMEDOUT', 'timeout'],
    ['EHOSTUNREACH', 'unreachable'],
    ['ENETUNREACH', 'unreachable'],
    ['ECONNRESET', 'reset'],
    ['UND_ERR_SOCKET', 'reset'],
  ];
  for (const [code, reason] of rows) assert.equal(ejectionReason(code), reason, code);
});

/** A detector whose probe answers as `probeOk` says, on mocked timers. */
function detector(probeOk: () => boolean) {
  const counters = new Counters();
  const ejected: string[] = [];
  const probed: string[] = [];
  const d = new OutlierDetector({
    probe: async (address) => {
      probed.push(address);
      return probeOk();
    },
    onEject: (address) => ejected.push(address),
    tallies: counters.tallies.upstream.outliers,
    random: () => 0,
  });
  return { d, counters, ejected, probed };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the detector: one ejection per outage, cache routes fail fast, a resume lets the address back', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { d, counters, ejected } = detector(() => false);
  assert.equal(d.route('10.0.0.1:8443', 'cache'), 'dispatch');
  assert.equal(d.connectFailed('10.0.0.1:8443', 'ECONNREFUSED'), true, 'the first failure marks it down');
  assert.equal(d.connectFailed('10.0.0.1:8443', 'ECONNREFUSED'), false, 'a second one finds it down');
  assert.deepEqual(ejected, ['10.0.0.1:8443'], 'the unsent requests were failed once');
  assert.equal(d.route('10.0.0.1:8443', 'cache'), 'fail-fast');
  assert.equal(d.route('10.0.0.2:8443', 'cache'), 'dispatch', 'other addresses are untouched');
  assert.equal(d.downCount, 1);
  assert.equal(d.route('10.0.0.1:8443', 'extproc'), 'dispatch', 'a resume named it again');
  assert.equal(d.downCount, 0);
  assert.deepEqual(counters.tallies.upstream.outliers, {
    ejections: { refused: 1, reset: 0, timeout: 0, unreachable: 0 },
    failedFast: 2,
    readmissions: { probe: 0, resume: 1 },
    probes: { ok: 0, failed: 0 },
  });
  d.close();
});

test('the detector probes with a backoff and lets the address back when a probe connects', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let ok = false;
  const { d, counters, probed } = detector(() => ok);
  d.connectFailed('10.0.0.1:8443', 'UND_ERR_CONNECT_TIMEOUT');
  t.mock.timers.tick(PROBE_BASE_MS - 1);
  await settle();
  assert.equal(probed.length, 0, 'no probe before the first delay');
  t.mock.timers.tick(1);
  await settle();
  assert.equal(probed.length, 1);
  assert.equal(d.isDown('10.0.0.1:8443'), true, 'the failed probe keeps it down');
  t.mock.timers.tick(2 * PROBE_BASE_MS - 1);
  await settle();
  assert.equal(probed.length, 1, 'the second probe waits twice as long');
  ok = true;
  t.mock.timers.tick(1);
  await settle();
  assert.equal(probed.length, 2);
  assert.equal(d.isDown('10.0.0.1:8443'), false);
  assert.deepEqual(counters.tallies.upstream.outliers.probes, { ok: 1, failed: 1 });
  assert.deepEqual(counters.tallies.upstream.outliers.readmissions, { probe: 1, resume: 0 });
  assert.equal(counters.tallies.upstream.outliers.ejections.timeout, 1);
  t.mock.timers.tick(60_000);
  await settle();
  assert.equal(probed.length, 2, 'no probe once it is back');
  d.close();
});
