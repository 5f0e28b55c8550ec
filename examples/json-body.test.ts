import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { createJsonBodyFilter } from './json-body.js';
import { fakeContext, fakeFilterContext } from './testing/fake-context.js';
import type { FilterResult } from '../proxy/api/public.js';

const HOST = 'counter.demo.actors.resources.substrate.ate.dev';
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

const run = (body: string, headers: Record<string, string> = JSON_HEADERS, method = 'POST') =>
  createJsonBodyFilter({ maxBytes: 64, required: ['type'] }).onRequest?.(fakeContext(HOST, headers, { method, body })) as Promise<FilterResult>;

test('a JSON object with the required fields continues', async () => {
  assert.equal((await run('{"type":"increment","by":1}')).kind, 'continue');
});

test('invalid JSON, a non-object or a missing field is answered 400 with a problem document', async () => {
  for (const [body, why] of [['{"type":', /not JSON/], ['[1,2]', /must be a JSON object/], ['{"by":1}', /missing field\(s\): type/]] as const) {
    const result = await run(body);
    assert.equal(result.kind, 'reply', body);
    if (result.kind !== 'reply') continue;
    assert.equal(result.reply.status, 400);
    assert.equal(result.reply.headers?.['content-type'], 'application/problem+json');
    assert.match(JSON.parse(String(result.reply.body)).detail, why);
  }
});

test('other methods and content types are not read; a body over the limit rejects (the proxy answers 413)', async () => {
  assert.equal((await run('not json', { 'content-type': 'text/plain' })).kind, 'continue');
  assert.equal((await run('not json', JSON_HEADERS, 'GET')).kind, 'continue');
  await assert.rejects(run(JSON.stringify({ type: 'x'.repeat(100) })), /too large/);
  await assert.rejects(async () => factory(fakeFilterContext({ maxBytes: 'big' })), /maxBytes/);
  assert.equal((await factory(fakeFilterContext({ required: ['a'] }))).name, 'json-body');
});
