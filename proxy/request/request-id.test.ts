import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextRequestId } from './request-id.js';

test('generated request ids are UUID-shaped and unique', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const id = nextRequestId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 10_000);
});
