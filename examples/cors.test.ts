import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { corsOptions, createCorsFilter } from './cors.js';
import { fakeContext, fakeFilterContext, fakeResponse } from './testing/fake-context.js';
import type { FilterResult } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';
const APP = 'https://app.example';

test('a preflight from an allowed origin is answered locally with 204 and the allowed methods and headers', () => {
  const f = createCorsFilter({ origins: [APP], methods: ['GET', 'POST'], maxAgeSeconds: 60 });
  const ctx = fakeContext(HOST, { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, { method: 'OPTIONS' });
  const result = f.onRequest?.(ctx) as FilterResult;
  assert.equal(result.kind, 'reply');
  if (result.kind !== 'reply') return;
  assert.equal(result.reply.status, 204);
  assert.equal(result.reply.headers?.['access-control-allow-origin'], APP);
  assert.equal(result.reply.headers?.['access-control-allow-methods'], 'GET, POST');
  assert.equal(result.reply.headers?.['access-control-allow-headers'], 'content-type');
  assert.equal(result.reply.headers?.['access-control-max-age'], '60');
});

test('a preflight from another origin is refused; a plain OPTIONS goes to the actor', () => {
  const f = createCorsFilter({ origins: [APP] });
  const refused = f.onRequest?.(fakeContext(HOST, { origin: 'https://evil.example', 'access-control-request-method': 'GET' }, { method: 'OPTIONS' })) as FilterResult;
  assert.equal(refused.kind === 'reply' && refused.reply.status, 403);
  assert.equal((f.onRequest?.(fakeContext(HOST, {}, { method: 'OPTIONS' })) as FilterResult).kind, 'continue');
});

test('responses to an allowed origin get Access-Control-Allow-Origin and Vary; others only Vary', () => {
  const f = createCorsFilter({ origins: [APP], credentials: true, exposeHeaders: ['x-request-id'] });
  const ok = fakeResponse(200);
  f.onResponse?.(fakeContext(HOST, { origin: APP }), ok);
  assert.equal(ok.headers.get('access-control-allow-origin'), APP);
  assert.equal(ok.headers.get('access-control-allow-credentials'), 'true');
  assert.equal(ok.headers.get('access-control-expose-headers'), 'x-request-id');
  assert.equal(ok.headers.get('vary'), 'Origin');
  const foreign = fakeResponse(200);
  f.onResponse?.(fakeContext(HOST, { origin: 'https://evil.example' }), foreign);
  assert.equal(foreign.headers.get('access-control-allow-origin'), undefined);
  const none = fakeResponse(200);
  f.onResponse?.(fakeContext(HOST), none);
  assert.equal(none.headers.has('vary'), false, 'no Origin: nothing added');
});

test('options are checked when the filter loads, naming the bad option', async () => {
  assert.throws(() => corsOptions({}), /options\.origins is required/);
  assert.throws(() => corsOptions({ origins: [APP], maxAgeSeconds: -1 }), /maxAgeSeconds/);
  assert.throws(() => corsOptions({ origins: 'https://x' }), /origins must be a list/);
  assert.throws(() => createCorsFilter({ origins: '*', credentials: true }), /credentials/);
  const f = await factory(fakeFilterContext({ origins: '*' }));
  const res = fakeResponse(200);
  f.onResponse?.(fakeContext(HOST, { origin: 'https://any.example' }), res);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
});
