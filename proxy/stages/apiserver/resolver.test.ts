import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { HeaderMap, RequestContext } from '../../api/filter.js';
import type { ResumeOutcome } from '../../../lib/resume/outcome.js';
import { startScriptedControl } from '../../../lib/resume/testing/scripted-control.js';
import { waitFor } from '../../../lib/testing/wait.js';
import { createApiserverResolverFilter } from './filter.js';
import { createApiserverResolver } from './resolver.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const log = pino({ level: 'silent' });

function context(authority: string): RequestContext {
  const m = new Map<string, string>();
  const headers: HeaderMap = {
    get: (n) => m.get(n),
    getAll: (n) => (m.has(n) ? [m.get(n) as string] : []),
    has: (n) => m.has(n),
    set: (n, v) => void m.set(n, v),
    append: (n, v) => void m.set(n, v),
    delete: (n) => void m.delete(n),
    entries: () => m.entries(),
  };
  return { requestId: 'r', method: 'GET', path: '/', originalPath: '/', readBody: async () => Buffer.alloc(0), authority, scheme: 'http', protocol: 'http/1.1', remoteAddress: '127.0.0.1', headers, attempt: 0, route: undefined, locals: new Map(), log };
}

function fakeFlights(outcome: ResumeOutcome) {
  const calls: string[] = [];
  return {
    calls,
    resolve: async (_ref: unknown, key: string) => {
      calls.push(key);
      return outcome;
    },
  };
}

const OK: ResumeOutcome = { kind: 'ok', ip: '127.0.1.3', actor: {} as never, resume: 'none' };

test('routes a resolved actor to <ip>:<worker-port> with the authority port', async () => {
  const flights = fakeFlights(OK);
  const filter = createApiserverResolverFilter({ flights, actorSuffix: SUFFIX, workerPort: 8443 });
  const ctx = context(`counter.demo.${SUFFIX}:9090`);
  assert.deepEqual(await filter.onRequest?.(ctx), { kind: 'continue' });
  assert.deepEqual(ctx.route, { address: '127.0.1.3:8443', source: 'apiserver' });
  assert.equal(ctx.headers.get('x-ate-target-port'), '9090');
  assert.deepEqual(flights.calls, ['demo/counter']);
});

test('formats IPv6 worker addresses in brackets', async () => {
  const filter = createApiserverResolverFilter({ flights: fakeFlights({ ...OK, ip: '::1' } as ResumeOutcome), actorSuffix: SUFFIX, workerPort: 8443 });
  const ctx = context(`counter.demo.${SUFFIX}`);
  await filter.onRequest?.(ctx);
  assert.equal(ctx.route?.address, '[::1]:8443');
});

test('a request the cache already routed is not resolved again', async () => {
  const flights = fakeFlights(OK);
  const filter = createApiserverResolverFilter({ flights, actorSuffix: SUFFIX, workerPort: 8443 });
  const ctx = context(`counter.demo.${SUFFIX}`);
  ctx.route = { address: '127.0.1.9:8443', source: 'cache', generation: 1 };
  await filter.onRequest?.(ctx);
  assert.equal(ctx.route.address, '127.0.1.9:8443');
  assert.equal(flights.calls.length, 0);
});

test('answers like ext_proc: 404 for a host that names no actor, the catalog for a failed resume', async () => {
  const invalid = createApiserverResolverFilter({ flights: fakeFlights(OK), actorSuffix: SUFFIX, workerPort: 8443 });
  const r1 = await invalid.onRequest?.(context('example.com'));
  assert.equal(r1?.kind === 'reply' && r1.reply.status, 404);
  assert.equal(r1?.kind === 'reply' && r1.reply.body, 'invalid host "example.com"');
  const cases: [ResumeOutcome, number, string][] = [
    [{ kind: 'grpc-error', code: grpc.status.NOT_FOUND, details: 'x', budgetExhausted: false }, 404, 'actor demo/counter not found'],
    [{ kind: 'grpc-error', code: grpc.status.UNAVAILABLE, details: 'x', budgetExhausted: false }, 503, 'actor demo/counter unavailable'],
    [{ kind: 'timeout' }, 504, 'actor demo/counter request timed out'],
    [{ kind: 'unroutable', reason: 'bad-ip', status: 'STATUS_RUNNING' }, 500, 'actor demo/counter routing failed'],
  ];
  for (const [outcome, status, body] of cases) {
    const filter = createApiserverResolverFilter({ flights: fakeFlights(outcome), actorSuffix: SUFFIX, workerPort: 8443 });
    const ctx = context(`counter.demo.${SUFFIX}`);
    const r = await filter.onRequest?.(ctx);
    assert.equal(r?.kind, 'reply');
    if (r?.kind !== 'reply') continue;
    assert.equal(r.reply.status, status);
    assert.equal(r.reply.body, body);
    assert.equal(r.reply.headers?.['content-type'], 'text/plain');
    assert.equal(ctx.route, undefined);
  }
});

test('the real resolver calls ResumeActor once per concurrent burst and counts calls by code', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const control = await startScriptedControl(async (req) => {
    await gate;
    return req.actor_ref.name === 'missing' ? { kind: 'error', code: grpc.status.NOT_FOUND } : { kind: 'ok', ip: '127.0.1.5' };
  });
  const registry = new Registry();
  const resolver = createApiserverResolver({ apiserver: control.address, actorSuffix: SUFFIX, workerPort: 8443, registry });
  try {
    const ctxs = [1, 2, 3].map(() => context(`counter.demo.${SUFFIX}`));
    const pending = ctxs.map((c) => resolver.filter.onRequest?.(c));
    await waitFor(() => control.calls.length === 1, 10_000, 'the one ResumeActor call');
    release();
    await Promise.all(pending);
    for (const c of ctxs) assert.equal(c.route?.address, '127.0.1.5:8443');
    const missing = await resolver.filter.onRequest?.(context(`missing.demo.${SUFFIX}`));
    assert.equal(missing?.kind === 'reply' && missing.reply.status, 404);
    assert.equal(control.calls.length, 2);
    assert.deepEqual(resolver.stats(), { kind: 'apiserver', resumeCalls: { OK: 1, NOT_FOUND: 1 }, flightJoins: 2 });
    assert.match(await registry.metrics(), /^actor_edge_proxy_resolver_resume_calls_total\{code="OK"\} 1$/m);
    resolver.resetStats();
    assert.deepEqual(resolver.stats().resumeCalls, {});
  } finally {
    resolver.close();
    await control.close();
  }
});
