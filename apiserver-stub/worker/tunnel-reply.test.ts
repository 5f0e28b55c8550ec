import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripStale } from './tunnel-reply.js';

test('the stale header is removed in any letter case; other headers stay', () => {
  const headers = { 'X-Ate-Assignment-Stale': 'true', 'x-ate-assignment-stale': 'true', 'X-ATE-ASSIGNMENT-STALE': '1', 'content-type': 'text/plain', 'x-ate-assignment-stalex': 'kept' };
  assert.deepEqual(stripStale(headers), { 'content-type': 'text/plain', 'x-ate-assignment-stalex': 'kept' });
});
