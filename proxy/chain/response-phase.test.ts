import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Chain } from './chain.js';
import { ChainResponse } from './response-phase.js';
import { ProxyRequest } from '../request/context.js';
import { Counters } from '../ops/stats.js';
import { CONTINUE, reply, type Filter } from '../api/filter.js';
import type { Router } from '../upstream/router.js';
import type { ResponseHeadDecision } from '../request/stage-context.js';
import { testRequest } from '../testing/proxy-request.js';
import { waitFor } from '../../lib/testing/wait.js';

const request = testRequest;

/** A router that hands a 200 head to the response-head hook (when set) and records the decision; never answers the chain. */
function headRouter(): Router & { decisions: (ResponseHeadDecision | 'no hook')[] } {
  const decisions: (ResponseHeadDecision | 'no hook')[] = [];
  return {
    decisions,
    forward(ctx) {
      const hook = ctx.responseHeadTransform;
      if (hook === undefined) return void decisions.push('no hook');
      void Promise.resolve(hook({ status: 200, headers: ['Content-Type', 'text/plain', 'content-length', '2'] })).then((d) => decisions.push(d));
    },
  };
}

const route: Filter = {
  name: 'route',
  onRequest(ctx) {
    ctx.route = { address: '10.0.0.1:1', source: 'cache' };
    return CONTINUE;
  },
};

test('response headers: case-insensitive, and no hop-by-hop, content-length or internal header may be set', () => {
  const r = ChainResponse.upstream({ status: 200, headers: ['Content-Type', 'text/plain', 'Content-Length', '2'] });
  assert.equal(r.headers.get('content-type'), 'text/plain');
  r.headers.set('X-New', 'a');
  r.headers.append('x-new', 'b');
  assert.deepEqual(r.headers.getAll('x-new'), ['a', 'b']);
  for (const name of ['connection', 'transfer-encoding', 'content-length', 'x-ate-assignment-stale', 'x-ate-target-port']) {
    assert.throws(() => r.headers.set(name, 'v'), TypeError, name);
  }
  assert.throws(() => r.headers.set('x-bad', 'a\r\nb'), /Invalid character/);
  assert.throws(() => r.headers.delete('content-length'), TypeError);
  assert.throws(() => (r.status = 99), TypeError);
  assert.throws(() => (r.status = 200.5), TypeError);
  r.status = 203;
  const decision = r.decision();
  assert.equal(decision.kind, 'continue');
  if (decision.kind === 'continue') assert.deepEqual(decision.head, { status: 203, headers: ['Content-Type', 'text/plain', 'Content-Length', '2', 'x-new', 'a', 'x-new', 'b'] });
});

test('without any onResponse the router gets no hook (the hit path is unchanged); with one, filters run in reverse order', async () => {
  const bare = headRouter();
  new Chain([route], bare, new Counters()).run(request(), () => {});
  assert.deepEqual(bare.decisions, ['no hook']);

  const order: string[] = [];
  const tagger = (name: string): Filter => ({
    name,
    onResponse(_ctx, response) {
      order.push(name);
      response.headers.append('x-seen', name);
    },
  });
  const router = headRouter();
  new Chain([tagger('outer'), tagger('inner'), route], router, new Counters()).run(request(), () => {});
  await waitFor(() => router.decisions.length === 1, 3000, 'the decision');
  assert.deepEqual(order, ['inner', 'outer']);
  const d = router.decisions[0] as ResponseHeadDecision;
  assert.equal(d.kind, 'continue');
  if (d.kind === 'continue') assert.deepEqual(d.head.headers.slice(-4), ['x-seen', 'inner', 'x-seen', 'outer']);
});

test('a stage\'s own response transform runs first; a reply in the response phase is seen by the filters before it', async () => {
  const seen: string[] = [];
  const outer: Filter = { name: 'outer', onResponse: (_ctx, r) => void seen.push(`${r.source}:${r.status}`) };
  const replacer: Filter = { name: 'replacer', onResponse: async () => reply({ status: 299, body: 'x' }) };
  const stage: Filter = {
    name: 'stage',
    onRequest(ctx) {
      ctx.route = { address: '10.0.0.1:1', source: 'extproc' };
      (ctx as ProxyRequest).responseHeadTransform = async (head) => ({ kind: 'continue', head: { status: 202, headers: head.headers } });
      return CONTINUE;
    },
  };
  const router = headRouter();
  new Chain([outer, replacer, stage], router, new Counters(), { userFilters: 2 }).run(request(), () => {});
  await waitFor(() => router.decisions.length === 1, 3000, 'the decision');
  assert.deepEqual(seen, ['local:299']);
  const d = router.decisions[0] as ResponseHeadDecision;
  assert.equal(d.kind === 'reply' && d.reply.status, 299);
});

test('replaceUserFilters: requests in flight keep their filters, new ones get the new filters, stage filters stay', () => {
  const chain = new Chain([{ name: 'old' }, route], headRouter(), new Counters(), { userFilters: 1 });
  const inFlight = request();
  chain.run(inFlight, () => {});
  const set = chain.replaceUserFilters([{ name: 'new-a' }, { name: 'new-b' }]);
  assert.equal(set.generation, 1);
  assert.deepEqual(set.userFilterNames, ['new-a', 'new-b']);
  assert.deepEqual(chain.filters.map((f) => f.name), ['new-a', 'new-b', 'route']);
  assert.deepEqual(inFlight.filterSet?.filters.map((f) => f.name), ['old', 'route']);
  const next = request();
  chain.run(next, () => {});
  assert.equal(next.filterSet, set);
  assert.throws(() => chain.replaceUserFilters([{ name: '' }]), /name/);
  assert.equal(chain.filterSet, set, 'a refused swap changes nothing');
});

test('the request path: assignments are checked (origin-form only), the original stays, a re-run restores it', () => {
  const ctx = request();
  ctx.path = '/new?q=1';
  assert.equal(ctx.path, '/new?q=1');
  assert.equal(ctx.originalPath, '/p');
  for (const bad of ['relative', 'http://x/', '/a b', '/frag#x', '*']) assert.throws(() => (ctx.path = bad), TypeError, bad);
  ctx.nextAttempt();
  assert.equal(ctx.path, '/p');
});
