import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import factory from './jwt.js';
import { fakeContext, fakeFilterContext } from './testing/fake-context.js';
import type { Filter, FilterResult } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';
const ISSUER = 'https://login.example';

/** A key pair, its JWKS written to a temporary file, and the filter loaded from it. */
async function setup(): Promise<{ filter: Filter; sign: (claims: Record<string, unknown>, opts?: { exp?: string; aud?: string }) => Promise<string>; cleanup(): void }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jwt-example-'));
  const jwks = path.join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify({ keys: [jwk] }));
  const filter = await factory(fakeFilterContext({ jwks, issuer: ISSUER, audience: 'actors', algorithms: ['ES256'] }));
  const sign = (claims: Record<string, unknown>, opts: { exp?: string; aud?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(opts.aud ?? 'actors')
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? '5m')
      .sign(privateKey);
  return { filter, sign, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a valid token continues: the credential is removed and the subject forwarded', async () => {
  const { filter, sign, cleanup } = await setup();
  try {
    const ctx = fakeContext(HOST, { authorization: `Bearer ${await sign({ sub: 'user-7' })}`, 'x-auth-subject': 'forged' });
    assert.equal(((await filter.onRequest?.(ctx)) as FilterResult).kind, 'continue');
    assert.equal(ctx.headers.get('authorization'), undefined);
    assert.equal(ctx.headers.get('x-auth-subject'), 'user-7');
  } finally {
    cleanup();
  }
});

test('no token, a wrong audience, an expired token or a foreign signature get 401 with a challenge', async () => {
  const { filter, sign, cleanup } = await setup();
  const other = await setup();
  try {
    const tokens = [undefined, await sign({ sub: 'u' }, { aud: 'elsewhere' }), await sign({ sub: 'u' }, { exp: '-1m' }), await other.sign({ sub: 'u' }), 'not.a.jwt'];
    for (const token of tokens) {
      const ctx = fakeContext(HOST, token === undefined ? { 'x-auth-subject': 'forged' } : { authorization: `Bearer ${token}` });
      const result = (await filter.onRequest?.(ctx)) as FilterResult;
      assert.equal(result.kind, 'reply', String(token));
      if (result.kind === 'reply') {
        assert.equal(result.reply.status, 401);
        assert.match(result.reply.headers?.['www-authenticate'] ?? '', /^Bearer realm="actor-edge", error="invalid_(request|token)"/);
      }
      assert.equal(ctx.headers.get('x-auth-subject'), undefined, 'a client-sent subject never passes');
    }
  } finally {
    cleanup();
    other.cleanup();
  }
});

test('bad options stop the filter from loading', async () => {
  await assert.rejects(async () => factory(fakeFilterContext({ issuer: ISSUER, audience: 'a' })), /options\.jwks/);
  await assert.rejects(async () => factory(fakeFilterContext({ jwks: '/nonexistent/jwks.json', issuer: ISSUER, audience: 'a' })), /ENOENT/);
});
