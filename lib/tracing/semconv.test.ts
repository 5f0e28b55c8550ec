import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as conventions from '@opentelemetry/semantic-conventions';
import * as ours from './semconv.js';

test('each attribute name equals the semantic-conventions package export of the same name', () => {
  const names = Object.keys(ours);
  assert.equal(names.length, 13);
  const theirs = conventions as unknown as Record<string, unknown>;
  for (const name of names) {
    assert.ok(name.startsWith('ATTR_'), name);
    assert.equal((ours as Record<string, string>)[name], theirs[name], name);
  }
});
