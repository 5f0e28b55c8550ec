/**
 * `npm test` builds incrementally: prune-dist keeps dist/ true to the sources. Run on a scratch project laid out
 * as this one is (the script finds the project from its own location).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from '../lib/testing/run-script.js';

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/prune-dist.mjs');

async function project(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'prune-dist-'));
  await mkdir(path.join(root, 'scripts'));
  await copyFile(SCRIPT, path.join(root, 'scripts', 'prune-dist.mjs'));
  await writeFile(path.join(root, 'tsconfig.json'), JSON.stringify({ include: ['lib'] }));
  await mkdir(path.join(root, 'lib'));
  await mkdir(path.join(root, 'dist', 'lib'), { recursive: true });
  await writeFile(path.join(root, 'lib', 'kept.ts'), '');
  for (const out of ['kept.js', 'kept.js.map', 'kept.d.ts', 'gone.js', 'gone.js.map', 'gone.d.ts', 'gone.d.ts.map', 'gone.test.js']) {
    await writeFile(path.join(root, 'dist', 'lib', out), '');
  }
  await writeFile(path.join(root, 'dist', '.tsbuildinfo'), '{}');
  return root;
}

test('outputs of a deleted source are removed, those of a living one kept, and the build info with them', async () => {
  const root = await project();
  try {
    const run = await runScript(path.join(root, 'scripts', 'prune-dist.mjs'), []);
    assert.equal(run.code, 0, run.stderr);
    const dist = path.join(root, 'dist', 'lib');
    for (const kept of ['kept.js', 'kept.js.map', 'kept.d.ts']) assert.ok(existsSync(path.join(dist, kept)), kept);
    for (const gone of ['gone.js', 'gone.js.map', 'gone.d.ts', 'gone.d.ts.map', 'gone.test.js']) assert.ok(!existsSync(path.join(dist, gone)), gone);
    assert.ok(existsSync(path.join(root, 'dist', '.tsbuildinfo')), 'every source has its output: the build info stays');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a source whose output is missing drops the build info (tsc then emits everything); --clean removes dist/', async () => {
  const root = await project();
  try {
    await writeFile(path.join(root, 'lib', 'new.ts'), '');
    assert.equal((await runScript(path.join(root, 'scripts', 'prune-dist.mjs'), [])).code, 0);
    assert.ok(!existsSync(path.join(root, 'dist', '.tsbuildinfo')));
    assert.equal((await runScript(path.join(root, 'scripts', 'prune-dist.mjs'), ['--clean'])).code, 0);
    assert.ok(!existsSync(path.join(root, 'dist')));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
