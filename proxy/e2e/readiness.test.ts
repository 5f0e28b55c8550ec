/**
 * Readiness that tells the truth, with real processes (apiserver-stub, extproc; the proxy, which only watches, in the
 * test's process) and real faults:
 * - the proxy's `/ready` answers 503 within 5 s of its extproc being killed (SIGKILL) or hung (SIGSTOP), says why,
 *   and answers 200 again within 5 s of extproc coming back (restarted on its port, or SIGCONT), by itself;
 * - extproc's `/ready` answers 503 while its control plane is hung, and recovers the same way, while the proxy stays
 *   ready (hits need no control plane);
 * - `/live` answers 200 throughout.
 * The processes check every 100 ms (the smallest interval) with a 300 ms timeout, so the faults take well under a
 * second to show; that the default interval and timeout (1 s each) meet the same 5 s bounds is shown first, on the
 * probe itself with a clock driven by hand (`lib/health-probe.test.ts` has its timing in detail).
 * Needs processes: extproc and the stub are killed, stopped and continued with signals.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { freePort } from '../../lib/loopback.js';
import { waitFor } from '../../lib/testing/wait.js';
import type { RunningComponent } from '../../lib/testing/component.js';
import { probeWorstCase } from '../../lib/testing/fake-health.js';
import { EXTPROC_FLAGS } from '../../extproc/config.js';
import { PROXY_FLAGS } from '../config.js';
import { client, send, startExtproc, startStub, STACK_TIMEOUTS, type Extproc, type Stub } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

const BOUND_MS = 5000;
/** The processes' health checks: the smallest interval, and a timeout a loaded machine still answers within. */
const CHECK_INTERVAL_MS = 100;
const CHECK_TIMEOUT_MS = 300;
const CHECKS = ['--health-check-interval-ms', String(CHECK_INTERVAL_MS), '--health-check-timeout-ms', String(CHECK_TIMEOUT_MS)];

const stopped: number[] = [];
const running: { stop(): Promise<unknown> }[] = [];
after(async () => {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  for (const r of running.reverse()) await r.stop();
});

async function ready(base: string): Promise<{ status: number; body: string }> {
  const res = await request(`${base}/ready`, { dispatcher: client });
  return { status: res.statusCode, body: await res.body.text() };
}

/** Waits until `/ready` answers `status`; returns the answer and how long after `since` it came. */
async function readyBecomes(base: string, status: number, since: number, what: string): Promise<{ body: string; afterMs: number }> {
  let last = { status: 0, body: '' };
  await waitFor(async () => (last = await ready(base)).status === status, BOUND_MS + 5000, what);
  return { body: last.body, afterMs: Date.now() - since };
}

function signal(pid: number, sig: NodeJS.Signals): number {
  process.kill(pid, sig);
  if (sig === 'SIGSTOP') stopped.push(pid);
  return Date.now();
}

test('with the default interval and timeout, the proxy\'s and extproc\'s checks fail readiness within 5 s of a dependency killed or hung, and pass it within 5 s of its return (clock driven)', async () => {
  for (const [component, flags] of [['proxy', PROXY_FLAGS], ['extproc', EXTPROC_FLAGS]] as const) {
    const [intervalMs, timeoutMs] = [flags['health-check-interval-ms'].default, flags['health-check-timeout-ms'].default];
    const worst = await probeWorstCase(intervalMs, timeoutMs);
    for (const [what, ms] of Object.entries(worst)) assert.ok(ms <= BOUND_MS, `${component} (interval ${intervalMs} ms, timeout ${timeoutMs} ms): ${what} after ${ms} ms`);
  }
});

test('proxy /ready: 503 within 5 s of extproc killed or hung (with the reason), 200 within 5 s of it coming back; /live stays 200', async (t) => {
  const stub: Stub<RunningComponent> = await startStub({ mode: 'process', workers: 2, actors: 4 });
  running.push(stub.component);
  // A port it is started on again below: from freePort(), outside the range outgoing connections take theirs from.
  const port = await freePort();
  let extproc: Extproc<RunningComponent> = await startExtproc(stub, CHECKS, `127.0.0.1:${port}`, undefined, 'process');
  running.push(extproc.component);
  // The proxy only watches (no signal reaches it): it runs in the test's process.
  const proxy: InProcessTestProxy = await startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, ...CHECKS] });
  running.push(proxy);

  await readyBecomes(proxy.admin, 200, Date.now(), 'the proxy to be ready');
  assert.equal((await ready(proxy.admin)).body, 'LIVE\n');
  assert.equal((await send(proxy, 'actor-000')).status, 200);

  // Killed: the connection is refused.
  const killedAt = signal(extproc.component.pid, 'SIGKILL');
  const down = await readyBecomes(proxy.admin, 503, killedAt, 'the proxy to fail readiness after extproc was killed');
  t.diagnostic(`killed → 503: ${down.afterMs} ms`);
  assert.ok(down.afterMs <= BOUND_MS, `503 after ${down.afterMs} ms`);
  assert.match(down.body, new RegExp(`^NOT_READY\\next_proc 127\\.0\\.0\\.1:${port}: unreachable \\(.*\\) \\(for \\d+\\.\\d s\\)\\n$`));
  const json = await request(`${proxy.admin}/ready`, { dispatcher: client, headers: { accept: 'application/json' } });
  assert.equal(json.statusCode, 503);
  const doc = (await json.body.json()) as { state: string; ready: boolean; reasons: string[] };
  assert.deepEqual([doc.state, doc.ready, doc.reasons.length], ['NOT_READY', false, 1]);
  assert.equal((await request(`${proxy.admin}/live`, { dispatcher: client })).statusCode, 200, 'alive while not ready');

  // Back on the same port: ready again by itself.
  extproc = await startExtproc(stub, CHECKS, `127.0.0.1:${port}`, undefined, 'process');
  running.push(extproc.component);
  const restartedAt = Date.now();
  const up = await readyBecomes(proxy.admin, 200, restartedAt, 'the proxy to be ready again');
  t.diagnostic(`restarted → 200: ${up.afterMs} ms`);
  assert.ok(up.afterMs <= BOUND_MS, `200 after ${up.afterMs} ms`);
  assert.equal(up.body, 'LIVE\n');
  assert.equal((await send(proxy, 'actor-001')).status, 200, 'a miss is resolved through the new extproc');

  // Hung: the connection stays open but nothing answers.
  const stoppedAt = signal(extproc.component.pid, 'SIGSTOP');
  const hung = await readyBecomes(proxy.admin, 503, stoppedAt, 'the proxy to fail readiness after extproc hung');
  t.diagnostic(`SIGSTOP → 503: ${hung.afterMs} ms`);
  assert.ok(hung.afterMs <= BOUND_MS, `503 after ${hung.afterMs} ms`);
  assert.match(hung.body, new RegExp(`^NOT_READY\\next_proc 127\\.0\\.0\\.1:${port}: no answer to a health check within ${CHECK_TIMEOUT_MS} ms`));
  const continuedAt = signal(extproc.component.pid, 'SIGCONT');
  const back = await readyBecomes(proxy.admin, 200, continuedAt, 'the proxy to be ready after SIGCONT');
  t.diagnostic(`SIGCONT → 200: ${back.afterMs} ms`);
  assert.ok(back.afterMs <= BOUND_MS, `200 after ${back.afterMs} ms`);
  assert.equal((await send(proxy, 'actor-002')).status, 200);

  // extproc's own readiness follows its control plane; the proxy does not cascade it.
  assert.equal((await ready(extproc.admin)).status, 200);
  const stubStoppedAt = signal(stub.component.pid, 'SIGSTOP');
  const cpDown = await readyBecomes(extproc.admin, 503, stubStoppedAt, 'extproc to fail readiness while its control plane hangs');
  t.diagnostic(`control plane SIGSTOP → extproc 503: ${cpDown.afterMs} ms`);
  assert.ok(cpDown.afterMs <= BOUND_MS, `503 after ${cpDown.afterMs} ms`);
  assert.match(cpDown.body, new RegExp(`^NOT_READY\\ncontrol plane 127\\.0\\.0\\.1:\\d+: no answer to a health check within ${CHECK_TIMEOUT_MS} ms`));
  assert.equal((await ready(proxy.admin)).status, 200, 'the proxy stays ready: its cached bindings need no control plane');
  const stubContinuedAt = signal(stub.component.pid, 'SIGCONT');
  const cpUp = await readyBecomes(extproc.admin, 200, stubContinuedAt, 'extproc to be ready again');
  t.diagnostic(`control plane SIGCONT → extproc 200: ${cpUp.afterMs} ms`);
  assert.ok(cpUp.afterMs <= BOUND_MS, `200 after ${cpUp.afterMs} ms`);
});
