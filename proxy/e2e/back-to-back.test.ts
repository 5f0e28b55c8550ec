/**
 * End to end: back-to-back moves. A real proxy in front of the real apiserver-stub and its workers; the
 * resolver is a scripted ext_proc that asks the stub where the actor is and then moves it (through the stub's
 * admin API) before the proxy can deliver, so every answer it gives is already out of date and the worker it
 * names answers 421 stale — the window a real move opens, held open on purpose.
 * - moved twice while one request is served: 200 from the actor's third worker, after two re-runs (the second
 *   after a backoff), delivered exactly once;
 * - an actor that never settles within --rerun-budget-ms: 503 with the re-runs-exhausted code, never delivered;
 * - a client that leaves during the backoff: the request ends cancelled (499 in the log), with no further attempt.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import http from 'node:http';
import { routeTo, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { accessLine, actorName, adminJson, client, hostOf, proxyStats, resetStats, send, startStub, stubActor, stubStats, ATESPACE, type Stub, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

interface RerunAttempts {
  byAttempt: Record<string, number>;
  backoffs: number;
  cancelledInBackoff: number;
  budgetExhausted: number;
}

let stub: Stub;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
let budget: InProcessTestProxy;
let patient: InProcessTestProxy;

describe('back-to-back moves', () => {
  before(async () => {
    stub = await startStub({ workers: 6, capacity: 4, actors: 6 });
    ep = await startScriptedExtProc(() => 'fail');
    [proxy, budget, patient] = await Promise.all([
      // The defaults: two re-runs, the second after a 10–50 ms backoff, within 3 s.
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off'] }),
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', '--max-reruns', '10', '--rerun-budget-ms', '400', '--connect-timeout-ms', '200', '--rerun-backoff-min-ms', '1', '--rerun-backoff-max-ms', '1'] }),
      startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', '--rerun-backoff-min-ms', '60000', '--rerun-backoff-max-ms', '60000', '--rerun-budget-ms', '120000'] }),
    ]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([proxy, budget, patient].map((p) => p?.stop()));
    await ep?.close();
    await stub?.component.stop();
  });

  const stubPost = (path: string): Promise<unknown> => adminJson(stub.admin, path, 'POST');
  const rerunAttempts = async (p: InProcessTestProxy): Promise<RerunAttempts> => (await adminJson<{ rerunAttempts: RerunAttempts }>(p.admin, '/stats')).rerunAttempts;

  /** Wakes `actor` and returns the worker it runs on. */
  async function wake(actor: string): Promise<string> {
    await stubPost(`/actors/${ATESPACE}/${actor}/resume`);
    const now = await stubActor(stub, actor);
    assert.equal(now.status, 'RUNNING');
    return now.workerIp as string;
  }

  /** ext_proc's answer: the worker the actor is on as far as the stub knows. */
  function routeToWorker(ip: string) {
    return routeTo(`${ip}:${stub.workerPort}`, String(stub.workerPort));
  }

  test('an actor moved twice while one request is served: 200 from its third worker after two re-runs, delivered once', async () => {
    const actor = actorName(0);
    await wake(actor);
    await resetStats(proxy.admin, stub.admin);
    const seenWorkers: string[] = [];
    const streamsBefore = ep.streams;
    ep.script = async () => {
      const where = (await stubActor(stub, actor)).workerIp as string;
      seenWorkers.push(where);
      // The first two answers go out of date at once: the actor moves on before the proxy delivers.
      if (seenWorkers.length <= 2) await stubPost(`/actors/${ATESPACE}/${actor}/move`);
      return routeToWorker(where);
    };
    const a = await send(proxy, actor, { method: 'POST', path: '/orders', body: '{"item":"widget"}', requestId: 'moved-twice' });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.app?.actor, actor);
    assert.equal(a.app?.requestId, 'moved-twice');
    assert.equal(ep.streams - streamsBefore, 3, 'one ext_proc stream per attempt');
    // A move picks any other free worker at random, so the third may be the first again; each move changes worker.
    assert.equal(seenWorkers.length, 3);
    assert.notEqual(seenWorkers[1], seenWorkers[0], `each move changes worker: ${seenWorkers.join(', ')}`);
    assert.notEqual(seenWorkers[2], seenWorkers[1], `each move changes worker: ${seenWorkers.join(', ')}`);
    assert.equal(a.app?.worker, seenWorkers[2], 'served by the worker the actor moved to last');
    assert.equal(a.app?.worker, (await stubActor(stub, actor)).workerIp);

    const s = await proxyStats(proxy);
    assert.deepEqual(s.reruns, { stale: 2, connect: 0, reset: 0 });
    const r = await rerunAttempts(proxy);
    assert.deepEqual(r.byAttempt, { '1': 1, '2': 1 });
    assert.equal(r.backoffs, 1, 'only the second re-run waited');
    assert.equal(r.budgetExhausted, 0);
    const line = await accessLine(proxy, 'moved-twice');
    assert.equal(line.status, 200);
    assert.equal(line.attempts, 3);
    const stats = await stubStats(stub);
    assert.equal(stats.workers[seenWorkers[0] as string]?.misdirected, 1, 'the first worker said stale');
    assert.equal(stats.workers[seenWorkers[1] as string]?.misdirected, 1, 'the second worker said stale');
    assert.deepEqual((await stubActor(stub, actor)).requestIds.filter((id) => id === 'moved-twice'), ['moved-twice'], 'delivered exactly once');
    assert.equal(stats.deliveries.duplicates, 0);
  });

  test('an actor that does not settle within --rerun-budget-ms: 503 with the re-runs-exhausted code, never delivered', async () => {
    const actor = actorName(1);
    const home = await wake(actor);
    const elsewhere = stub.workerIps.find((ip) => ip !== home) as string;
    await resetStats(budget.admin, stub.admin);
    const streamsBefore = ep.streams;
    // Every answer names a worker the actor is not on, and takes 100 ms: the 400 ms budget runs out long before
    // the ten re-runs --max-reruns would allow.
    ep.script = async () => {
      await new Promise((r) => setTimeout(r, 100));
      return routeToWorker(elsewhere);
    };
    const a = await send(budget, actor, { requestId: 'never-settles' });
    assert.equal(a.status, 503);
    assert.equal(a.text, 'actor assignment stale: re-runs exhausted\n');
    assert.equal(a.headers['x-ate-assignment-stale'], undefined);
    const line = await accessLine(budget, 'never-settles');
    assert.equal(line.error, 'PROXY_ERR_STALE_EXHAUSTED');
    assert.match(String(line.details), /re-run budget of 400 ms spent/);
    const r = await rerunAttempts(budget);
    assert.equal(r.budgetExhausted, 1);
    const reruns = Object.values(r.byAttempt).reduce((x, y) => x + y, 0);
    // However slow the machine, ten 100 ms answers cannot fit in 400 ms: the budget ends it before the count does.
    assert.ok(reruns < 10, `the budget, not the count, ended the re-runs (${reruns} re-runs)`);
    assert.equal(ep.streams - streamsBefore, reruns + 1);
    assert.equal((await stubActor(stub, actor)).requestIds.includes('never-settles'), false);
  });

  test('a client that leaves during the re-run backoff ends the request as cancelled, without re-running', async () => {
    const actor = actorName(2);
    const home = await wake(actor);
    const elsewhere = stub.workerIps.find((ip) => ip !== home) as string;
    await resetStats(patient.admin, stub.admin);
    const streamsBefore = ep.streams;
    ep.script = () => routeToWorker(elsewhere);

    const ingress = new URL(patient.ingress);
    const req = http.request({ host: ingress.hostname, port: ingress.port, path: '/', agent: false, headers: { host: hostOf(actor), 'x-request-id': 'left-in-backoff' } });
    req.on('error', () => {}); // we hang up ourselves
    req.on('response', () => assert.fail('no response was expected'));
    req.end();
    // Two stale answers: the first re-run ran at once, the second waits its (60 s) backoff. Then hang up.
    await waitFor(async () => (await rerunAttempts(patient)).backoffs === 1, 10_000, 'the request to wait before its second re-run');
    req.destroy();
    await waitFor(async () => (await proxyStats(patient)).requests.total === 1, 10_000, 'the proxy to finish the request');

    const line = await accessLine(patient, 'left-in-backoff');
    assert.equal(line.status, 499);
    assert.equal(line.error, 'PROXY_ERR_DOWNSTREAM_CLOSED');
    assert.equal(line.attempts, 2, 'no third attempt');
    const r = await rerunAttempts(patient);
    assert.equal(r.cancelledInBackoff, 1);
    assert.deepEqual(r.byAttempt, { '1': 1, '2': 0 });
    assert.equal(ep.streams - streamsBefore, 2);
    assert.equal((await stubStats(stub)).workers[elsewhere]?.misdirected, 2);
  });
});
