import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { offload } from './json-route.js';
import { fakeContext, fakeFilterContext } from './testing/fake-context.js';
import { OffloadPool } from '../proxy/chain/offload/offload-pool.js';
import type { Filter, FilterResult, RequestContext } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';
const JSON_HEADERS = { 'content-type': 'application/json' };
const OPTIONS = { maxBytes: 64, allowed: ['small', 'large'] };

/** The filter as the proxy builds it: its `offload` bound to a pool of `workers` threads (0: inline). */
async function filterOn(pool: OffloadPool): Promise<Filter> {
  return factory({ ...fakeFilterContext(OPTIONS), offload: pool.offloader(new URL('./json-route.js', import.meta.url).href, offload as never) });
}

async function post(filter: Filter, body: string, headers: Record<string, string> = JSON_HEADERS): Promise<{ result: FilterResult; ctx: RequestContext }> {
  const ctx = fakeContext(HOST, headers, { method: 'POST', body });
  return { result: await (filter.onRequest?.(ctx) as Promise<FilterResult>), ctx };
}

for (const workers of [0, 1]) {
  test(`routes by the body's field, and rejects what it cannot route (${workers === 0 ? 'inline' : 'on a worker thread'})`, async () => {
    const pool = await OffloadPool.start({ workers, backlog: 4 });
    try {
      const filter = await filterOn(pool);
      const routed = await post(filter, '{"model":"large","prompt":"hi"}', { ...JSON_HEADERS, 'x-model': 'forged' });
      assert.equal(routed.result.kind, 'continue');
      assert.equal(routed.ctx.headers.get('x-model'), 'large');
      for (const [body, why] of [['{"model":', /not JSON/], ['[1]', /JSON object/], ['{"prompt":"x"}', /names no model/], ['{"model":"huge"}', /not one of small, large/]] as const) {
        const { result } = await post(filter, body);
        assert.equal(result.kind, 'reply', body);
        if (result.kind === 'reply') {
          assert.equal(result.reply.status, 400);
          assert.match(JSON.parse(String(result.reply.body)).detail, why);
        }
      }
      await assert.rejects(post(filter, JSON.stringify({ model: 'small', pad: 'x'.repeat(100) })), /too large/); // the proxy answers 413
      assert.equal((await post(filter, 'not json', { 'content-type': 'text/plain' })).result.kind, 'continue');
      assert.deepEqual(pool.tallies.calls, workers === 0 ? { pool: 0, inline: 5 } : { pool: 5, inline: 0 });
    } finally {
      await pool.close();
    }
  });
}

test('bad options are refused when the filter is loaded', async () => {
  await assert.rejects(async () => factory(fakeFilterContext({ allowed: [] })), /allowed/);
  await assert.rejects(async () => factory(fakeFilterContext({ allowed: ['a'], maxBytes: -1 })), /maxBytes/);
  await assert.rejects(async () => factory(fakeFilterContext({ allowed: ['a'] })), /offload export/);
});
