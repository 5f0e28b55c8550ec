import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import factory, { calibrateRounds, DEFAULT_ROUNDS, DIGEST_HEADER, heavyWork, offload, roundsFrom, ROUNDS_ENV } from './heavy-json.js';
import { fakeContext, fakeFilterContext } from '../../examples/testing/fake-context.js';
import { OffloadPool } from '../../proxy/chain/offload/offload-pool.js';
import type { Filter, FilterResult, RequestContext } from '../../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';
const BODY = '{"model":"small","messages":[{"role":"user","content":"hello"}]}';
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

test('heavyWork chains SHA-256 rounds over the body: 0 rounds is the body\'s digest, each round hashes the last digest and the body', () => {
  const body = bytes(BODY);
  const d0 = createHash('sha256').update(body).digest();
  assert.equal(heavyWork(body, 0), d0.toString('hex'));
  assert.equal(heavyWork(body, 1), createHash('sha256').update(d0).update(body).digest('hex'));
  assert.equal(heavyWork(body, 7), heavyWork(body, 7), 'deterministic');
  assert.notEqual(heavyWork(body, 7), heavyWork(body, 8));
});

test('the offloaded part sets the digest of a JSON object and answers 400 for anything else', async () => {
  const ok = await offload({ body: bytes(BODY), rounds: 3 });
  assert.deepEqual(ok, { kind: 'continue', setHeaders: { [DIGEST_HEADER]: heavyWork(bytes(BODY), 3).slice(0, 16) } });
  for (const body of ['{"model":', '[1]', 'null']) {
    const d = await offload({ body: bytes(body), rounds: 3 });
    assert.equal(d.kind, 'reply', body);
    if (d.kind === 'reply') assert.equal(d.reply.status, 400);
  }
});

test('the rounds: from BENCH_HEAVY_ROUNDS (0 allowed), the default without it, refused when not a whole number; calibration scales to the target', () => {
  assert.equal(roundsFrom({}), DEFAULT_ROUNDS);
  assert.equal(roundsFrom({ [ROUNDS_ENV]: '0' }), 0);
  assert.equal(roundsFrom({ [ROUNDS_ENV]: '250' }), 250);
  assert.throws(() => roundsFrom({ [ROUNDS_ENV]: '2.5' }), /whole number/);
  assert.throws(() => roundsFrom({ [ROUNDS_ENV]: '-1' }), /whole number/);
  const c = calibrateRounds(bytes(BODY), 1, 20, 3);
  assert.ok(c.msPerRound > 0 && c.rounds >= 1);
  assert.equal(c.rounds, Math.max(1, Math.round(1 / c.msPerRound)));
});

async function send(filter: Filter, method: string, headers: Record<string, string>, body?: string): Promise<{ result: FilterResult; ctx: RequestContext }> {
  const ctx = fakeContext(HOST, headers, { method, ...(body === undefined ? {} : { body }) });
  return { result: await (filter.onRequest?.(ctx) as Promise<FilterResult>), ctx };
}

for (const workers of [0, 1]) {
  test(`the filter offloads JSON POSTs only, with the rounds from the environment (${workers === 0 ? 'inline' : 'on a worker thread'})`, async () => {
    const pool = await OffloadPool.start({ workers, backlog: 4 });
    const saved = process.env[ROUNDS_ENV];
    process.env[ROUNDS_ENV] = '5';
    try {
      const filter = await factory({ ...fakeFilterContext({}), offload: pool.offloader(new URL('./heavy-json.js', import.meta.url).href, offload as never) });
      const post = await send(filter, 'POST', { 'content-type': 'application/json' }, BODY);
      assert.equal(post.result.kind, 'continue');
      assert.equal(post.ctx.headers.get(DIGEST_HEADER), heavyWork(bytes(BODY), 5).slice(0, 16));
      const get = await send(filter, 'GET', {});
      assert.equal(get.result.kind, 'continue');
      assert.equal(get.ctx.headers.has(DIGEST_HEADER), false);
      assert.equal((await send(filter, 'POST', { 'content-type': 'text/plain' }, BODY)).result.kind, 'continue');
      assert.deepEqual(pool.tallies.calls, workers === 0 ? { pool: 0, inline: 1 } : { pool: 1, inline: 0 }, 'one call: the JSON POST');
    } finally {
      if (saved === undefined) delete process.env[ROUNDS_ENV];
      else process.env[ROUNDS_ENV] = saved;
      await pool.close();
    }
  });
}
