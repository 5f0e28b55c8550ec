import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Chain } from './chain.js';
import { ChainResponse } from './chain-response.js';
import { Counters } from '../ops/stats.js';
import { CONTINUE, reply, type Filter } from '../api/filter.js';
import type { Router } from '../upstream/router.js';
import type { ChainFilter } from './filter-set.js';
import { testRequest, type TestRequest } from '../testing/proxy-request.js';
import { upstreamAnswer } from '../testing/upstream-answer.js';
import { waitFor } from '../../lib/testing/wait.js';

const request = testRequest;

/** A router that answers every request with a 200 head and the body `ok`, synchronously (as undici's headers callback). */
function headRouter(): Router & { calls: number } {
  const r = {
    calls: 0,
    forward(ctx: TestRequest, done: Parameters<Router['forward']>[1]) {
      r.calls++;
      done(ctx, upstreamAnswer(200, ['Content-Type', 'text/plain', 'content-length', '2'], 'ok'));
    },
  };
  return r as Router & { calls: number };
}

const route: Filter = {
  name: 'route',
  onRequest(ctx) {
    ctx.route = { address: '10.0.0.1:1', source: 'cache' };
    return CONTINUE;
  },
};

test('response headers: case-insensitive, and no hop-by-hop, content-length or internal header may be set', () => {
  const r = ChainResponse.upstream(200, ['Content-Type', 'text/plain', 'Content-Length', '2']);
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
  assert.equal(r.source, 'upstream');
  assert.equal(r.status, 203);
  assert.deepEqual(r.headers.list, ['Content-Type', 'text/plain', 'Content-Length', '2', 'x-new', 'a', 'x-new', 'b']);
});

test('without any onResponse the head is written in the router\'s own callback (the hit path is unchanged); with one, filters run in reverse order', async () => {
  const bare = request();
  new Chain([route], headRouter(), new Counters()).run(bare, () => {});
  assert.deepEqual(bare.exchange.head, { status: 200, headers: ['Content-Type', 'text/plain', 'content-length', '2', 'x-request-id', bare.requestId] }, 'written before run() returned, with the request id');
  assert.equal(bare.exchange.body, 'ok');

  const order: string[] = [];
  const tagger = (name: string): Filter => ({
    name,
    onResponse(_ctx, response) {
      order.push(name);
      response.headers.append('x-seen', name);
    },
  });
  const tagged = request();
  new Chain([tagger('outer'), tagger('inner'), route], headRouter(), new Counters()).run(tagged, () => {});
  await waitFor(() => tagged.exchange.headSent, 3000, 'the head');
  assert.deepEqual(order, ['inner', 'outer']);
  assert.equal(tagged.exchange.sentStatus, 200);
  assert.deepEqual(tagged.exchange.head?.headers.slice(-6), ['x-seen', 'inner', 'x-seen', 'outer', 'x-request-id', tagged.requestId]);
});

test('a stage\'s own response hook runs first (it is the last filter); a reply in the response phase is seen by the filters before it', async () => {
  const seen: string[] = [];
  const outer: Filter = { name: 'outer', onResponse: (_ctx, r) => void seen.push(`${r.source}:${r.status}`) };
  const replacer: Filter = { name: 'replacer', onResponse: async (_ctx, r) => (seen.push(`replacer saw ${r.status}`), reply({ status: 299, body: 'x' })) };
  const stage: ChainFilter = {
    name: 'stage',
    onRequest(ctx) {
      ctx.route = { address: '10.0.0.1:1', source: 'extproc' };
      return CONTINUE;
    },
    async onResponse(_ctx, response) {
      response.replaceHead(202, response.headers.list);
    },
  };
  const ctx = request();
  new Chain([outer, replacer, stage], headRouter(), new Counters(), { userFilters: 2 }).run(ctx, () => {});
  await waitFor(() => ctx.exchange.headSent, 3000, 'the answer');
  assert.deepEqual(seen, ['replacer saw 202', 'local:299']);
  assert.equal(ctx.exchange.sentStatus, 299);
  assert.equal(ctx.exchange.body, 'x');
});

test('replaceUserFilters: requests in flight keep their filters, new ones get the new filters, stage filters stay', () => {
  const chain = new Chain([{ name: 'old' }, route], headRouter(), new Counters(), { userFilters: 1 });
  const inFlight = request();
  chain.run(inFlight, () => {});
  const before = chain.filterSetOf(inFlight);
  const set = chain.replaceUserFilters([{ name: 'new-a' }, { name: 'new-b' }]);
  assert.equal(set.generation, 1);
  assert.deepEqual(set.userFilterNames, ['new-a', 'new-b']);
  assert.deepEqual(chain.filters.map((f) => f.name), ['new-a', 'new-b', 'route']);
  assert.deepEqual(chain.filterSetOf(inFlight).filters.map((f) => f.name), ['old', 'route']);
  assert.equal(chain.filterSetOf(inFlight), before);
  const next = request();
  chain.run(next, () => {});
  assert.equal(chain.filterSetOf(next), set);
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

test('a streamed local reply goes through the response phase: a filter that changes its head keeps the stream, one that replaces it cancels it', async () => {
  const streamed = (text: string) => {
    const body = {
      kind: 'streamed' as const,
      cancelled: 0,
      sent: false,
      async next() {
        if (body.sent) return { kind: 'end' as const };
        body.sent = true;
        return { kind: 'data' as const, data: Buffer.from(text) };
      },
      cancel() {
        body.cancelled++;
      },
    };
    return body;
  };
  const kept = streamed('streamed');
  const branding: Filter = { name: 'branding', onResponse: (_ctx, r) => void r.headers.set('x-brand', 'b') };
  const streamer: Filter = { name: 'streamer', onRequest: () => reply({ status: 200, body: kept }) };
  const one = request();
  new Chain([branding, streamer], headRouter(), new Counters()).run(one, () => {});
  await waitFor(() => one.exchange.complete, 3000, 'the streamed reply');
  assert.equal(one.exchange.header('x-brand'), 'b');
  assert.equal(one.exchange.header('content-length'), undefined);
  assert.equal(one.exchange.body, 'streamed');
  assert.equal(kept.cancelled, 1, 'released once written');

  const replaced = streamed('never');
  const replacer: Filter = { name: 'replacer', onResponse: async () => reply({ status: 503, body: 'down' }) };
  const two = request();
  new Chain([replacer, { name: 'streamer', onRequest: () => reply({ status: 200, body: replaced }) }], headRouter(), new Counters()).run(two, () => {});
  await waitFor(() => two.exchange.complete, 3000, 'the replacing reply');
  assert.equal(two.exchange.sentStatus, 503);
  assert.equal(two.exchange.body, 'down');
  assert.equal(replaced.sent, false, 'the replaced stream was never read');
  assert.equal(replaced.cancelled, 1, 'and it was cancelled');
});
