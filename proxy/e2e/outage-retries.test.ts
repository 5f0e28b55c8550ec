/**
 * End to end (real apiserver-stub, extproc and proxy, in the test's process): misses ride out a short outage of
 * the slow path, within the request's re-run budget, and no longer.
 * - ext_proc restarting: a miss whose stream cannot be opened is retried on fresh streams and answered 200 once
 *   ext_proc is back; an outage longer than the budget still answers 500 at the budget; past
 *   `--extproc-retry-max-waiting` waiting requests a burst of misses fails at once; `--failure-mode-allow` never
 *   waits.
 * - The control plane answering UNAVAILABLE: extproc retries the resume within the budget the proxy sends with the
 *   stream, so a short outage answers 200 and a longer one 503 at the budget (not a 504 when the proxy gives up);
 *   past `--parked-max` waiting requests a burst of misses is answered 503 at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from '../../lib/loopback.js';
import { waitFor } from '../../lib/testing/wait.js';
import { actorName, adminJson, client, send, startExtproc, startStub, type Answer, type Extproc, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import type { ProxyStatsBlock } from '../ops/stats.js';
import { ERRORS } from '../http/errors.js';

/** The budget of the proxy whose outages outlast it: short, since those tests wait it out. */
const SHORT_BUDGET_MS = 600;
/** A retry backoff is at most this long: an answer "at the budget" comes within one of it. */
const LAST_BACKOFF_MS = 300;

let stub: Stub;
let extproc: Extproc | undefined;
let extprocListen = '';
/** Waits out an outage (a generous budget). */
let patient: InProcessTestProxy;
/** Outages outlast its short budget; at most 2 requests wait to retry their stream. */
let hasty: InProcessTestProxy;

const EXTPROC_ARGS = ['--parked-max', '2'];

describe('misses riding out a short outage', () => {
  before(async () => {
    stub = await startStub({ workers: 4, capacity: 20, actors: 60 });
    extprocListen = `127.0.0.1:${await freePort()}`;
    extproc = await startExtproc(stub, EXTPROC_ARGS, extprocListen);
    [patient, hasty] = await Promise.all([
      startTestProxy({ mode: 'in-process', extproc: extprocListen, args: [...STACK_TIMEOUTS, '--rerun-budget-ms', '30000', '--extproc-message-timeout-ms', '30000'] }),
      startTestProxy({
        mode: 'in-process',
        extproc: extprocListen,
        args: [...STACK_TIMEOUTS, '--rerun-budget-ms', String(SHORT_BUDGET_MS), '--connect-timeout-ms', '300', '--extproc-retry-max-waiting', '2'],
      }),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([patient, hasty].map((p) => p?.stop()));
    await extproc?.component.stop();
    await stub?.component.stop();
  });

  let nextActor = 0;
  /** A cold actor no earlier test used: its first request is a miss. */
  const coldActor = (): string => actorName(nextActor++);

  const stats = async (p: InProcessTestProxy): Promise<ProxyStatsBlock> => adminJson<ProxyStatsBlock>(p.admin, '/stats');
  const extprocStats = async (): Promise<Record<string, any>> => adminJson((extproc as Extproc).admin, '/stats');

  async function stopExtproc(): Promise<void> {
    await extproc?.component.stop();
    extproc = undefined;
  }

  async function startExtprocAgain(): Promise<void> {
    extproc = await startExtproc(stub, EXTPROC_ARGS, extprocListen);
  }

  /** Sends a miss and measures how long its answer took. */
  async function timed(p: InProcessTestProxy, actor: string): Promise<Answer & { readonly ms: number }> {
    const started = performance.now();
    const answer = await send(p, actor, { method: 'POST', path: '/orders', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
    return { ...answer, ms: performance.now() - started };
  }

  test('ext_proc restarting: a miss waits on fresh streams and is answered 200 once ext_proc is back', async () => {
    const before = await stats(patient);
    await stopExtproc();
    try {
      const pending = timed(patient, coldActor());
      await waitFor(async () => (await stats(patient)).extproc.retries.retried - before.extproc.retries.retried >= 2, 10_000, 'the miss to retry its stream');
      assert.equal((await stats(patient)).extproc.retries.waiting, 1);
      await startExtprocAgain();
      const answer = await pending;
      assert.equal(answer.status, 200, answer.text);
    } finally {
      if (extproc === undefined) await startExtprocAgain();
    }
    const after = await stats(patient);
    assert.equal(after.extproc.retries.recovered - before.extproc.retries.recovered, 1);
    assert.equal(after.extproc.retries.budgetExhausted - before.extproc.retries.budgetExhausted, 0);
    assert.equal(after.extproc.retries.waiting, 0);
  });

  test('ext_proc down longer than the budget: the miss still answers 500 at the budget', async () => {
    const before = await stats(hasty);
    await stopExtproc();
    try {
      const answer = await timed(hasty, coldActor());
      assert.equal(answer.status, ERRORS.EXTPROC_FAILED.status);
      assert.equal(answer.text.trim(), ERRORS.EXTPROC_FAILED.text);
      assert.ok(answer.ms >= SHORT_BUDGET_MS - LAST_BACKOFF_MS, `answered after ${Math.round(answer.ms)} ms: it waited for ext_proc within the budget`);
      const after = await stats(hasty);
      assert.ok(after.extproc.retries.retried - before.extproc.retries.retried >= 3, 'retried on fresh streams with a growing backoff');
      assert.equal(after.extproc.retries.budgetExhausted - before.extproc.retries.budgetExhausted, 1);
      assert.equal(after.extproc.retries.waiting, 0);
    } finally {
      await startExtprocAgain();
    }
  });

  test('ext_proc down: a burst of misses fails at once past --extproc-retry-max-waiting; only those under it wait', async () => {
    const before = await stats(hasty);
    await stopExtproc();
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => timed(hasty, coldActor())));
      for (const a of answers) assert.equal(a.status, ERRORS.EXTPROC_FAILED.status);
      const after = await stats(hasty);
      assert.equal(after.extproc.retries.shed - before.extproc.retries.shed, 4, 'four found two already waiting');
      assert.equal(after.extproc.retries.budgetExhausted - before.extproc.retries.budgetExhausted, 2);
      const byTime = answers.map((a) => a.ms).sort((x, y) => x - y);
      assert.ok(byTime[3]! < byTime[4]!, 'the four shed were answered before the two that waited');
      assert.ok(byTime[4]! >= SHORT_BUDGET_MS - LAST_BACKOFF_MS, 'the two waited for the budget');
    } finally {
      await startExtprocAgain();
    }
  });

  test('--failure-mode-allow: a processor failure is never waited on; the miss continues unprocessed at once (no route: 503)', async () => {
    const optional = await startTestProxy({ mode: 'in-process', extproc: extprocListen, args: [...STACK_TIMEOUTS, '--failure-mode-allow'] });
    await stopExtproc();
    try {
      const answer = await timed(optional, coldActor());
      assert.equal(answer.status, ERRORS.NO_ROUTE.status);
      assert.equal(answer.text.trim(), ERRORS.NO_ROUTE.text);
      assert.equal((await stats(optional)).extproc.retries.retried, 0);
    } finally {
      await optional.stop();
      await startExtprocAgain();
    }
  });

  test('the control plane down for a moment: extproc retries the resume, the miss is answered 200', async () => {
    const before = await extprocStats();
    await adminJson(stub.admin, '/outage', 'POST', { ms: 60_000 });
    let ended = false;
    try {
      const pending = timed(patient, coldActor());
      await waitFor(async () => ((await extprocStats()).resumeRetries.UNAVAILABLE ?? 0) > (before.resumeRetries.UNAVAILABLE ?? 0), 10_000, 'extproc to retry the resume');
      await adminJson(stub.admin, '/outage', 'DELETE');
      ended = true;
      const answer = await pending;
      assert.equal(answer.status, 200, answer.text);
    } finally {
      if (!ended) await adminJson(stub.admin, '/outage', 'DELETE');
    }
  });

  test('the control plane down longer than the budget: 503 at the proxy\'s budget (sent to extproc), not a timeout', async () => {
    const before = await extprocStats();
    await adminJson(stub.admin, '/outage', 'POST', { ms: 60_000 });
    try {
      const answer = await timed(hasty, coldActor());
      assert.equal(answer.status, 503);
      assert.match(answer.text, /^actor demo\/actor-\d+ unavailable$/);
      assert.ok(answer.ms >= SHORT_BUDGET_MS - LAST_BACKOFF_MS, `answered after ${Math.round(answer.ms)} ms: extproc retried within the budget`);
      const after = await extprocStats();
      assert.ok((after.resumeRetries.UNAVAILABLE ?? 0) - (before.resumeRetries.UNAVAILABLE ?? 0) >= 2, 'retried');
      assert.equal(after.outOfBudget - before.outOfBudget, 1, 'answered when no retry could start within the budget');
    } finally {
      await adminJson(stub.admin, '/outage', 'DELETE');
    }
  });

  test('the control plane down: a burst of misses is answered 503 at once past --parked-max; only those under it wait', async () => {
    const before = await extprocStats();
    await adminJson(stub.admin, '/outage', 'POST', { ms: 60_000 });
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => timed(hasty, coldActor())));
      const shed = answers.filter((a) => /router at capacity$/.test(a.text));
      const waited = answers.filter((a) => /unavailable$/.test(a.text));
      assert.equal(shed.length, 4, answers.map((a) => a.text).join(' | '));
      assert.equal(waited.length, 2);
      for (const a of answers) assert.equal(a.status, 503);
      assert.ok(Math.max(...shed.map((a) => a.ms)) < Math.min(...waited.map((a) => a.ms)), 'the four shed were answered before the two that waited');
      assert.equal((await extprocStats()).parked.rejected - before.parked.rejected, 4);
    } finally {
      await adminJson(stub.admin, '/outage', 'DELETE');
    }
  });
});
