import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { createErrorPagesFilter, errorPage } from './error-pages.js';
import { fakeContext, fakeFilterContext, fakeResponse } from './testing/fake-context.js';
import type { FilterResult } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';

test('a proxy error page is replaced by the branded HTML page, status and other headers kept', () => {
  const f = createErrorPagesFilter({ site: 'Example <Cloud>' });
  const result = f.onResponse?.(fakeContext(HOST), fakeResponse(503, { 'retry-after': '1', 'content-type': 'text/plain' }, 'local', 'PROXY_ERR_UPSTREAM_CONNECT')) as FilterResult;
  assert.equal(result?.kind, 'reply');
  if (result?.kind !== 'reply') return;
  assert.equal(result.reply.status, 503);
  assert.equal(result.reply.headers?.['content-type'], 'text/html; charset=utf-8');
  assert.equal(result.reply.headers?.['retry-after'], '1');
  assert.match(String(result.reply.body), /503 Service unavailable/);
  assert.match(String(result.reply.body), /Example &lt;Cloud&gt;/, 'the site name is escaped');
  assert.match(String(result.reply.body), /test-request/);
});

test('successes and (by default) the actors\' own errors pass untouched', () => {
  const f = createErrorPagesFilter({ site: 'x' });
  assert.equal(f.onResponse?.(fakeContext(HOST), fakeResponse(200, {}, 'local')), undefined);
  assert.equal(f.onResponse?.(fakeContext(HOST), fakeResponse(502)), undefined);
  const withUpstream = createErrorPagesFilter({ site: 'x', upstream: true });
  assert.equal((withUpstream.onResponse?.(fakeContext(HOST), fakeResponse(502)) as FilterResult)?.kind, 'reply');
  assert.equal(withUpstream.onResponse?.(fakeContext(HOST), fakeResponse(404)), undefined, 'only 5xx from actors');
});

test('the factory reads its options and refuses bad ones', async () => {
  await assert.rejects(async () => factory(fakeFilterContext({ site: 3 })), /options\.site/);
  assert.equal((await factory(fakeFilterContext())).name, 'error-pages');
  assert.match(errorPage('s', 599, 'r'), /599 Error/);
});
