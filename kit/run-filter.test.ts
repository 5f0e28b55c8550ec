import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTINUE, reply, type FilterFactory } from '../proxy/api/public.js';
import { actorAuthority, fakeRequest, fakeResponse, runFilter } from './index.js';

const tagger: FilterFactory = ({ options }) => ({
  name: 'tagger',
  onRequest(ctx) {
    if (ctx.path === '/private') return reply({ status: 403, headers: { 'Content-Type': 'text/plain' }, body: 'no\n' });
    ctx.headers.set('x-tag', String(options.tag ?? 'none'));
    ctx.path = `/v2${ctx.path}`;
    return CONTINUE;
  },
  onResponse(_ctx, response) {
    if (response.status >= 500) return reply({ status: 503, body: 'sorry\n' });
    response.headers.append('vary', 'x-tag');
  },
});

test('runFilter: the request goes upstream as the filter left it; the client gets the answer as onResponse left it', async () => {
  const run = await runFilter(tagger, { options: { tag: 'blue' }, request: { path: '/a' }, upstream: { status: 201, headers: { vary: 'accept' } } });
  assert.equal(run.outcome, 'upstream');
  assert.equal(run.request.headers.get('x-tag'), 'blue');
  assert.equal(run.request.path, '/v2/a');
  assert.equal(run.request.originalPath, '/a');
  assert.equal(run.status, 201);
  assert.deepEqual(run.headers, { vary: 'accept, x-tag' });
  assert.equal(run.reply, undefined);
});

test('runFilter: a request-phase reply goes to the client as it is, without the filter\'s onResponse', async () => {
  const run = await runFilter(tagger, { request: { path: '/private' } });
  assert.equal(run.outcome, 'reply');
  assert.equal(run.status, 403);
  assert.deepEqual(run.headers, { 'content-type': 'text/plain' });
  assert.equal(run.reply?.body, 'no\n');
});

test('runFilter: a response-phase reply replaces the upstream answer; a built filter or a context runs as well', async () => {
  const filter = await tagger({ log: fakeRequest().log, actorSuffix: 'x', options: {} });
  const run = await runFilter(filter, { request: fakeRequest({ actor: 'counter' }), upstream: { status: 502 } });
  assert.equal(run.outcome, 'upstream');
  assert.equal(run.status, 503);
  assert.equal(run.reply?.body, 'sorry\n');
  assert.equal(run.request.authority, actorAuthority('counter'));
});

test('fakes: host is fixed as in the proxy; names compare case-insensitively; readBody keeps its limit', async () => {
  const ctx = fakeRequest({ headers: { 'X-One': '1' }, body: 'hello' });
  assert.equal(ctx.headers.get('host'), actorAuthority('actor-000'));
  assert.equal(ctx.headers.get('x-one'), '1');
  assert.throws(() => ctx.headers.set('Host', 'elsewhere'), TypeError);
  assert.throws(() => ctx.headers.delete('host'), TypeError);
  assert.equal(Buffer.from(await ctx.readBody({ limit: 5 })).toString(), 'hello');
  await assert.rejects(ctx.readBody({ limit: 4 }), (err: Error & { status?: number }) => err.status === 413);
  const res = fakeResponse({ status: 204, headers: { 'Cache-Control': 'no-store' } });
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.source, 'upstream');
});
