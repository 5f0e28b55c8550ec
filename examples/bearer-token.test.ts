import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import factory, { createBearerTokenFilter } from './bearer-token.js';
import { fakeContext, fakeFilterContext } from './testing/fake-context.js';
import type { FilterResult } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';

function run(filter: ReturnType<typeof createBearerTokenFilter>, headers: Record<string, string>) {
  const ctx = fakeContext(HOST, headers);
  const result = filter.onRequest?.(ctx) as FilterResult;
  return { ctx, result };
}

test('a valid bearer token continues, and the credential is not forwarded', () => {
  const f = createBearerTokenFilter({ tokens: ['s3cret', 'other'] });
  const { ctx, result } = run(f, { authorization: 'Bearer s3cret' });
  assert.equal(result.kind, 'continue');
  assert.equal(ctx.headers.get('authorization'), undefined);
  assert.equal(run(f, { authorization: 'bearer other' }).result.kind, 'continue', 'scheme is case-insensitive');
});

test('missing, malformed or wrong tokens get 401 with a WWW-Authenticate challenge', () => {
  const f = createBearerTokenFilter({ tokens: ['s3cret'] });
  for (const headers of [{} as Record<string, string>, { authorization: 'Basic czNjcmV0' }, { authorization: 'Bearer wrong' }, { authorization: 'Bearer s3cret extra' }]) {
    const { result } = run(f, headers);
    assert.equal(result.kind, 'reply', JSON.stringify(headers));
    if (result.kind === 'reply') {
      assert.equal(result.reply.status, 401);
      assert.match(result.reply.headers?.['www-authenticate'] ?? '', /^Bearer/);
    }
  }
});

test('forward: true keeps the Authorization header; no tokens at all is a start-up error', async () => {
  const f = createBearerTokenFilter({ tokens: ['t'], forward: true });
  assert.equal(run(f, { authorization: 'Bearer t' }).ctx.headers.get('authorization'), 'Bearer t');
  assert.throws(() => createBearerTokenFilter({ tokens: [''] }), /no tokens/);
  const saved = process.env.BEARER_TOKENS;
  process.env.BEARER_TOKENS = 'from-env';
  try {
    const fromEnv = await factory(fakeFilterContext());
    assert.equal(fromEnv.name, 'bearer-token');
    assert.equal((fromEnv.onRequest?.(fakeContext(HOST, { authorization: 'Bearer from-env' })) as FilterResult).kind, 'continue');
  } finally {
    if (saved === undefined) delete process.env.BEARER_TOKENS;
    else process.env.BEARER_TOKENS = saved;
  }
});
