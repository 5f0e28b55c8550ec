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

test('every error code is in the error catalog page, docs/reference/errors.md, with its status and text', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const page = readFileSync(path.join(root, 'docs', 'reference', 'errors.md'), 'utf8');
  for (const e of Object.values(ERRORS)) {
    const row = page.split('\n').find((line) => line.startsWith(`| \`${e.code}\` |`));
    assert.ok(row !== undefined, `${e.code} missing from docs/reference/errors.md (run \`npm run docs\`)`);
    assert.ok(row.includes(`| ${e.status} |`) && row.includes(e.text), `${e.code}: docs/reference/errors.md has another status or text`);
  }
});

test("every error code is explained in the proxy's design, docs/design/proxy.md", () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const design = readFileSync(path.join(root, 'docs', 'design', 'proxy.md'), 'utf8');
  for (const e of Object.values(ERRORS)) assert.ok(design.includes(e.code), `${e.code} missing from docs/design/proxy.md`);
});
