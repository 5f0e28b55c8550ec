/**
 * The image's build context (.dockerignore, an allow-list) holds every source folder the image's `tsc -p .` needs:
 * each folder of tsconfig.json's `include` that has a source file other than a test. A new folder left out fails
 * the image build, and only the compose test would find it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function hasSource(dir: string): boolean {
  return readdirSync(path.join(ROOT, dir), { recursive: true })
    .map(String)
    .some((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.split(path.sep).includes('node_modules'));
}

test('.dockerignore allows every tsconfig folder that holds a non-test source file', () => {
  const include = (JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }).include;
  const allowed = new Set(
    readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => /^!([\w-]+)\/$/.exec(l.trim())?.[1])
      .filter((d): d is string => d !== undefined),
  );
  const needed = include.filter(hasSource);
  assert.ok(needed.includes('kit') && needed.includes('proxy'), `folders with sources: ${needed.join(', ')}`);
  assert.deepEqual(needed.filter((d) => !allowed.has(d)), [], 'folders the image build needs but .dockerignore leaves out');
});
