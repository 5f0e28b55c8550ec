import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Chain } from './chain.js';
import { ProxyRequest } from '../request/context.js';
import { Counters } from '../ops/stats.js';
import { CONTINUE, reply, type Filter, type RerunReason, type UpstreamOutcome } from '../api/filter.js';
import type { Router } from '../upstream/router.js';
import { ERRORS } from '../http/errors.js';
import { pino } from 'pino';
import { silentLog } from '../testing/helpers.js';
import { testRequest, type TestRequest } from '../testing/proxy-request.js';
import { attemptOf } from '../testing/upstream-answer.js';
import { waitFor } from '../../lib/testing/wait.js';

const request = testRequest;

/** Runs one request through the chain; resolves once the chain is done with it. */
function runChain(chain: Chain, ctx: TestRequest): Promise<ProxyRequest> {
  return new Promise((resolve) => chain.run(ctx, resolve));
}

/** A router that answers scripted outcomes, one per attempt, and records what it was asked. */
function scriptedRouter(outcomes: UpstreamOutcome[]): Router & { calls: { address: string; headers: [string, string][] }[] } {
  const calls: { address: string; headers: [string, string][] }[] = [];
  return {
    calls,
    forward(ctx, done) {
      calls.push({ address: ctx.route?.address ?? '', headers: [...ctx.headers.entries()] });
      const o = outcomes.shift();
      if (o === undefined) throw new Error('no more scripted outcomes');
      const answer = attemptOf(o);
      if (answer.kind === 'response') done(ctx, answer);
      else queueMicrotask(() => done(ctx, answer));
    },
  };
}

const OK: UpstreamOutcome = { kind: 'response', status: 200, headers: {} };
const STALE: UpstreamOutcome = { kind: 'stale', status: 421 };

/** A resolver stand-in: routes each attempt to the next address. */
function resolver(addresses: string[]): Filter & { seen: number } {
  const f = {
    name: 'resolver',
    seen: 0,
    onRequest(ctx: ProxyRequest) {
      f.seen++;
      ctx.headers.set('x-ate-target-port', String(80 + ctx.attempt));
      if (ctx.route === undefined) ctx.route = { address: addresses[ctx.attempt] ?? 'none', source: 'extproc' as const };
      return CONTINUE;
    },
  };
  return f as Filter & { seen: number };
}

test('a stale answer re-runs the whole chain once: onRerun on every filter, route and header changes cleared', async () => {
  const events: string[] = [];
  const observer: Filter = {
    name: 'observer',
    onRequest: (ctx) => (events.push(`request#${ctx.attempt} route=${ctx.route?.address ?? '-'} port=${ctx.headers.get('x-ate-target-port') ?? '-'}`), CONTINUE),
    onUpstreamResponse: (ctx, o) => void events.push(`upstream#${ctx.attempt} ${o.kind}`),
    onRerun: (ctx, reason: RerunReason) => void events.push(`rerun#${ctx.attempt} ${reason}`),
    onDone: (_ctx, r) => void events.push(`done ${r.status}`),
  };
  const router = scriptedRouter([STALE, OK]);
  const counters = new Counters();
  const chain = new Chain([observer, resolver(['10.0.0.1:1', '10.0.0.2:1'])], router, counters, { maxReruns: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  chain.done(ctx, ctx.exchange.sentStatus, undefined);
  assert.deepEqual(events, [
    'request#0 route=- port=-',
    'upstream#0 stale',
    'rerun#0 stale',
    'request#1 route=- port=-',
    'upstream#1 response',
    'done 200',
  ]);
  assert.deepEqual(router.calls.map((c) => c.address), ['10.0.0.1:1', '10.0.0.2:1']);
  assert.deepEqual(router.calls[1]?.headers, [['host', 'a.demo.example'], ['x-ate-target-port', '81']]);
  assert.equal(counters.tallies.reruns.stale, 1);
  assert.equal(ctx.exchange.sentStatus, 200);
});

test('re-runs are bounded: exhausted stale answers become a 503 naming the reason, never the 421', async () => {
  const router = scriptedRouter([STALE, STALE, STALE]);
  const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1', '10.0.0.3:1'])], router, new Counters(), { maxReruns: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  assert.equal(router.calls.length, 2);
  assert.equal(ctx.exchange.sentStatus, 503);
  assert.equal(ctx.error, ERRORS.STALE_EXHAUSTED);
});

test('back-to-back stale answers: the second re-run waits its backoff, each re-run is counted by its number', async () => {
  const router = scriptedRouter([STALE, STALE, OK]);
  const counters = new Counters();
  const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1', '10.0.0.3:1'])], router, counters, { maxReruns: 2, backoffMinMs: 1, backoffMaxMs: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  assert.deepEqual(router.calls.map((c) => c.address), ['10.0.0.1:1', '10.0.0.2:1', '10.0.0.3:1']);
  assert.equal(ctx.exchange.sentStatus, 200);
  assert.equal(ctx.attempt, 2);
  assert.deepEqual([...counters.rerunsByAttempt.subarray(1, 4)], [1, 1, 0]);
  assert.equal(counters.tallies.reruns.stale, 2);
  assert.equal(counters.tallies.rerunAttempts.backoffs, 1, 'only the second re-run waited');
});

test('a spent re-run budget ends the request with the re-runs-exhausted 503', async () => {
  const router = scriptedRouter([STALE, OK]);
  const counters = new Counters();
  const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1'])], router, counters, { maxReruns: 2, budgetMs: 1 });
  const ctx = request('GET', performance.now() - 10);
  await runChain(chain, ctx);
  assert.equal(router.calls.length, 1);
  assert.equal(ctx.exchange.sentStatus, 503);
  assert.equal(ctx.error, ERRORS.STALE_EXHAUSTED);
  assert.match(ctx.details ?? '', /budget of 1 ms/);
  assert.equal(counters.tallies.rerunAttempts.budgetExhausted, 1);
});

test('a client that leaves during the backoff ends the request as cancelled, without the re-run', async () => {
  const router = scriptedRouter([STALE, STALE, OK]);
  const counters = new Counters();
  const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1', '10.0.0.3:1'])], router, counters, { maxReruns: 2, backoffMinMs: 60_000, backoffMaxMs: 60_000, budgetMs: 120_000 });
  const ctx = request();
  const finished = runChain(chain, ctx);
  // The client leaves once the chain waits before the second re-run (as the ingress does on close).
  await waitFor(() => counters.tallies.rerunAttempts.backoffs === 1, 5000, 'the backoff to start');
  ctx.exchange.close();
  ctx.abortFilters();
  await finished;
  assert.equal(router.calls.length, 2, 'no third attempt');
  assert.equal(ctx.error, ERRORS.DOWNSTREAM_CLOSED);
  assert.match(ctx.details ?? '', /went away during/);
  assert.equal(counters.tallies.rerunAttempts.cancelledInBackoff, 1);
  assert.deepEqual([...counters.rerunsByAttempt.subarray(1, 3)], [1, 0]);
});

test('a worker status outside 100-599 is not relayed: 502, for HTTP/1.1 clients as HTTP/2 already refused it (fuzz seed 4141)', async () => {
  for (const status of [600, 999]) {
    const chain = new Chain([resolver(['10.0.0.1:1'])], scriptedRouter([{ kind: 'response', status, headers: {} }]), new Counters(), { maxReruns: 1 });
    const ctx = request();
    await runChain(chain, ctx);
    assert.equal(ctx.exchange.sentStatus, 502, String(status));
    assert.equal(ctx.error, ERRORS.UPSTREAM_RESPONSE_INVALID);
    assert.match(ctx.details ?? '', new RegExp(`status ${status} is not from 100 to 599`));
  }
});

test('a POST reset after it was written is not re-run: 502, counted as a reset of a request that cannot be replayed', async () => {
  const router = scriptedRouter([{ kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' }, OK]);
  const counters = new Counters();
  const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1'])], router, counters, { maxReruns: 1 });
  const ctx = request('POST');
  await runChain(chain, ctx);
  assert.equal(router.calls.length, 1);
  assert.equal(ctx.exchange.sentStatus, 502);
  assert.equal(ctx.error, ERRORS.UPSTREAM_RESET_AFTER_SEND);
  assert.equal(counters.tallies.upstream.resetsNotReplayable, 1);
});

test('a reset the chain re-runs or fails for another reason is not counted as one that could not be replayed', async () => {
  const cases: [method: string, outcomes: UpstreamOutcome[], status: number][] = [
    ['GET', [{ kind: 'reset', requestWritten: true, code: 'UND_ERR_SOCKET' }, OK], 200], // written, but safe to send again
    ['POST', [{ kind: 'reset', requestWritten: false, code: 'ECONNRESET' }, OK], 200], // never fully written
    ['POST', [{ kind: 'reset', requestWritten: false, code: 'ECONNRESET' }, { kind: 'reset', requestWritten: false, code: 'ECONNRESET' }], 503], // re-runs spent
  ];
  for (const [method, outcomes, status] of cases) {
    const counters = new Counters();
    const chain = new Chain([resolver(['10.0.0.1:1', '10.0.0.2:1'])], scriptedRouter(outcomes), counters, { maxReruns: 1 });
    const ctx = request(method);
    await runChain(chain, ctx);
    assert.equal(ctx.exchange.sentStatus, status, method);
    assert.equal(counters.tallies.upstream.resetsNotReplayable, 0, `${method} ${status}`);
  }
});

test('a local reply short-circuits the chain; later filters and the router never run', async () => {
  const router = scriptedRouter([OK]);
  const later = resolver(['10.0.0.1:1']);
  const deny: Filter = { name: 'deny', onRequest: () => reply({ status: 403, body: 'no', headers: { 'x-why': 'test', 'x-ate-assignment-stale': 'true' } }) };
  const chain = new Chain([deny, later], router, new Counters(), { maxReruns: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  assert.equal(ctx.exchange.sentStatus, 403);
  assert.equal(ctx.exchange.header('x-why'), 'test');
  assert.equal(ctx.exchange.header('x-ate-assignment-stale'), undefined);
  assert.equal(ctx.exchange.body, 'no');
  assert.equal(later.seen, 0);
  assert.equal(router.calls.length, 0);
});

test('a filter that throws fails only this request with 500 naming the filter in the log details', async () => {
  const boom: Filter = {
    name: 'boom',
    onRequest: () => {
      throw new Error('kaput');
    },
  };
  const chain = new Chain([boom, resolver(['10.0.0.1:1'])], scriptedRouter([OK]), new Counters(), { maxReruns: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  assert.equal(ctx.exchange.sentStatus, 500);
  assert.equal(ctx.error, ERRORS.FILTER_FAILED);
  assert.match(ctx.details ?? '', /boom.*kaput/);
});

test('an async filter is awaited; without a route the answer is 503 "no healthy upstream"', async () => {
  const slow: Filter = { name: 'slow', onRequest: async () => CONTINUE };
  const chain = new Chain([slow], scriptedRouter([]), new Counters(), { maxReruns: 1 });
  const ctx = request();
  await runChain(chain, ctx);
  assert.equal(ctx.exchange.sentStatus, 503);
  assert.equal(ctx.error?.text, 'no healthy upstream');
});

test('the chain refuses filters without a name and a router without forward()', () => {
  assert.throws(() => new Chain([{ name: '' }], scriptedRouter([]), new Counters(), { maxReruns: 1 }), /name/);
  assert.throws(() => new Chain([], {} as Router, new Counters(), { maxReruns: 1 }), /router/);
});

test('an error thrown in onUpstreamResponse, onRerun or onDone is logged with the filter name and ignored', async () => {
  const logged: Record<string, unknown>[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
  const fail = (where: string) => () => {
    throw new Error(`broken ${where}`);
  };
  const broken: Filter = { name: 'broken', onUpstreamResponse: fail('upstream'), onRerun: fail('rerun'), onDone: fail('done') };
  const events: string[] = [];
  const witness: Filter = {
    name: 'witness',
    onUpstreamResponse: (_ctx, o) => void events.push(`upstream ${o.kind}`),
    onRerun: (_ctx, reason) => void events.push(`rerun ${reason}`),
    onDone: (_ctx, r) => void events.push(`done ${r.status}`),
  };
  const router = scriptedRouter([STALE, OK]);
  const chain = new Chain([broken, witness, resolver(['10.0.0.1:1', '10.0.0.2:1'])], router, new Counters(), { maxReruns: 1 });
  const ctx = request();
  Object.defineProperty(ctx, 'log', { value: log });
  await runChain(chain, ctx);
  chain.done(ctx, ctx.exchange.sentStatus, undefined);
  assert.equal(ctx.exchange.sentStatus, 200, 'the request went on: re-run and answered');
  assert.equal(router.calls.length, 2);
  assert.equal(ctx.error, undefined);
  assert.deepEqual(events, ['upstream stale', 'rerun stale', 'upstream response', 'done 200'], 'the other filters still ran');
  assert.deepEqual(
    logged.map((l) => [l.filter, (l.err as { message: string }).message]),
    [
      ['broken', 'broken upstream'],
      ['broken', 'broken rerun'],
      ['broken', 'broken upstream'],
      ['broken', 'broken done'],
    ],
  );
});

test('a filter answering a value outside CONTINUE or reply(...) fails its own request with 500 naming it', async () => {
  for (const bad of [42, undefined, 'continue', { kind: 'skip' }]) {
    const odd: Filter = { name: 'odd', onRequest: () => bad as never };
    const later = resolver(['10.0.0.1:1']);
    const router = scriptedRouter([OK]);
    const chain = new Chain([odd, later], router, new Counters(), { maxReruns: 1 });
    const ctx = request();
    await runChain(chain, ctx);
    assert.equal(ctx.exchange.sentStatus, 500, String(bad));
    assert.equal(ctx.error, ERRORS.FILTER_FAILED);
    assert.match(ctx.details ?? '', /filter odd threw: onRequest returned/);
    assert.equal(later.seen, 0, 'the filters after it never ran');
    assert.equal(router.calls.length, 0, 'nothing was forwarded');
  }
});
