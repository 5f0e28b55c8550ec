/**
 * Which test files `npm test` runs several to a process (scripts/test-groups.mjs): the rule read from a file's
 * source, on a scratch project, and how the files are cut into groups and read back from a group file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface TestGroups {
  mustRunAlone(relative: string, root: string): string | undefined;
  groupsOf(files: readonly string[], seconds: (file: string) => number, limits: { maxSeconds: number; maxFiles: number }): string[][];
  groupSource(files: readonly string[]): string;
  membersOf(groupText: string): string[];
}

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/test-groups.mjs');
const groups = (await import(pathToFileURL(SCRIPT).href)) as TestGroups;

const UNIT = "import { test } from 'node:test';\ntest('t', () => {});\n";
/** `from '<spec>'` of an import in a scratch file (spelled so, this file's own imports stay its real ones). */
const from = (spec: string): string => `from '${spec}'`;

test('a file may share a process only when its source and its testing helpers reach nothing past it', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'test-groups-'));
  try {
    const files: Record<string, string> = {
      'lib/plain.test.ts': UNIT,
      'lib/scoped-hooks.test.ts': "import { after, before, describe, test } from 'node:test';\ndescribe('d', () => {\n  before(() => {});\n  after(() => {});\n  test('t', () => {});\n});\n",
      'lib/top-hook.test.ts': "import { before, test } from 'node:test';\nbefore(() => {});\ntest('t', () => {});\n",
      'lib/each-hook.test.ts': "import { afterEach, test } from 'node:test';\nafterEach(() => {});\ntest('t', () => {});\n",
      'lib/global-mock.test.ts': "import { mock, test } from 'node:test';\ntest('t', () => { mock.method(Date, 'now'); });\n",
      'lib/context-mock.test.ts': "import { test } from 'node:test';\ntest('t', (t) => { t.mock.method(Date, 'now'); });\n",
      'lib/env.test.ts': `${UNIT}process.env.LOG_LEVEL = 'debug';\n`,
      'lib/env-read.test.ts': `${UNIT}const level = process.env.LOG_LEVEL === 'debug';\n`,
      'lib/listener.test.ts': `${UNIT}process.on('warning', () => {});\n`,
      'lib/global.test.ts': `${UNIT}globalThis.fetch = undefined;\n`,
      'lib/spawns.test.ts': `import { spawn } from 'node:child_process';\n${UNIT}`,
      'lib/needs.test.ts': `/** Needs processes: it sends SIGTERM. */\n${UNIT}`,
      'lib/handles.test.ts': `${UNIT}process.getActiveResourcesInfo();\n`,
      'lib/via-helper.test.ts': `import { run } ${from('./testing/outer.js')};\n${UNIT}`,
      'lib/testing/outer.ts': `export { run } ${from('./inner.js')};\n`,
      'lib/testing/inner.ts': "import { execFile } from 'node:child_process';\nexport const run = execFile;\n",
      'lib/via-product.test.ts': `import { x } ${from('./product.js')};\n${UNIT}`,
      'lib/product.ts': "import { execFile } from 'node:child_process';\nexport const x = execFile;\n",
      'proxy/e2e/stack.test.ts': UNIT,
      'proxy/testing/fuzz/wire.test.ts': UNIT,
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    const verdict = (file: string): string | undefined => groups.mustRunAlone(file.replace(/\.ts$/, '.js'), root);
    for (const shares of ['lib/plain.test.ts', 'lib/scoped-hooks.test.ts', 'lib/context-mock.test.ts', 'lib/env-read.test.ts', 'lib/via-product.test.ts']) {
      assert.equal(verdict(shares), undefined, shares);
    }
    assert.equal(verdict('lib/top-hook.test.ts'), 'top-level hook');
    assert.equal(verdict('lib/each-hook.test.ts'), 'top-level hook');
    assert.equal(verdict('lib/global-mock.test.ts'), 'process-wide mock');
    assert.equal(verdict('lib/env.test.ts'), 'writes process.env');
    assert.equal(verdict('lib/listener.test.ts'), 'process-wide listener or exit');
    assert.equal(verdict('lib/global.test.ts'), 'assigns a global');
    assert.equal(verdict('lib/spawns.test.ts'), 'child processes');
    assert.equal(verdict('lib/needs.test.ts'), 'child processes');
    assert.equal(verdict('lib/handles.test.ts'), 'reads process-wide state');
    assert.equal(verdict('lib/via-helper.test.ts'), `processes in ${path.join('lib', 'testing', 'inner.ts')}`);
    assert.equal(verdict('proxy/e2e/stack.test.ts'), 'e2e or fuzz');
    assert.equal(verdict('proxy/testing/fuzz/wire.test.ts'), 'e2e or fuzz');
    assert.equal(verdict('lib/missing.test.ts'), 'no TypeScript source');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('files are cut into groups in path order, by seconds and by count; a group of one is left out', () => {
  const seconds: Record<string, number> = { 'a.test.js': 4, 'b.test.js': 4, 'c.test.js': 4, 'd.test.js': 1, 'e.test.js': 1, 'f.test.js': 1, 'g.test.js': 9 };
  const cut = groups.groupsOf(Object.keys(seconds).reverse(), (f) => seconds[f] ?? 0, { maxSeconds: 9, maxFiles: 3 });
  assert.deepEqual(cut, [['a.test.js', 'b.test.js'], ['c.test.js', 'd.test.js', 'e.test.js']]);
  assert.deepEqual(groups.groupsOf(['x.test.js'], () => 1, { maxSeconds: 9, maxFiles: 3 }), []);
});

test('a group file imports its files in order, and its text names them back', () => {
  const members = ['lib/a.test.js', 'proxy/edge/b.test.js'];
  const text = groups.groupSource(members);
  assert.match(text, /^import '\.\.\/lib\/a\.test\.js';$/m);
  assert.deepEqual(groups.membersOf(text), members);
});
