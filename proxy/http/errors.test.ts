import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ERRORS } from './errors.js';

test('error codes are unique, prefixed, and carry an HTTP status and a text', () => {
  const codes = Object.values(ERRORS).map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
  for (const e of Object.values(ERRORS)) {
    assert.match(e.code, /^PROXY_ERR_[A-Z_]+$/);
    assert.ok(e.status >= 400 && e.status < 600, e.code);
    assert.ok(e.text.length > 0, e.code);
  }
});

test('every error code is documented in DESIGN.md', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const design = readFileSync(path.join(root, 'DESIGN.md'), 'utf8');
  for (const e of Object.values(ERRORS)) assert.ok(design.includes(e.code), `${e.code} missing from DESIGN.md`);
});
