import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../lib/flags.js';
import { runNewFilter, writeFilterProject } from './new-filter.js';

// Only what the generator writes: the generated project's own npm install and npm test run in
// scripts/filter-package-check.sh (CI), from a packed tarball.
const root = mkdtempSync(path.join(tmpdir(), 'new-filter-'));
describe('new-filter', () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  const read = (...p: string[]): string => readFileSync(path.join(root, ...p), 'utf8');

  test('new-filter NAME writes an ES-module project: package.json, tsconfig, the filter, its tests, a README', () => {
    const out: string[] = [];
    runNewFilter(['add-hello'], root, (t) => void out.push(t));
    assert.match(out.join(''), /Wrote add-hello\/: package\.json, tsconfig\.json, src\/add-hello\.ts, src\/add-hello\.test\.ts, README\.md/);
    assert.match(out.join(''), /cd add-hello\n {2}npm install/);
    const pkg = JSON.parse(read('add-hello', 'package.json')) as Record<string, any>;
    assert.equal(pkg.name, 'add-hello');
    assert.equal(pkg.type, 'module');
    assert.deepEqual(Object.keys(pkg.scripts), ['build', 'test']);
    assert.deepEqual(Object.keys(pkg.devDependencies).sort(), ['@types/node', 'actor-edge', 'typescript']);
    const ownPkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<string, any>;
    assert.equal(pkg.devDependencies.typescript, ownPkg.devDependencies.typescript, 'the TypeScript this build uses');
    assert.match(pkg.devDependencies['actor-edge'], /^file:/, 'a checkout: its directory');
    const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { overrides?: unknown };
    assert.deepEqual(pkg.overrides, own.overrides, "actor-edge's overrides (npm applies only the root project's)");
    const tsconfig = JSON.parse(read('add-hello', 'tsconfig.json')) as Record<string, any>;
    assert.equal(tsconfig.compilerOptions.module, 'NodeNext');
    assert.equal(tsconfig.compilerOptions.outDir, 'dist');
    const filter = read('add-hello', 'src', 'add-hello.ts');
    assert.match(filter, /from 'actor-edge'/);
    assert.match(filter, /export default factory/);
    assert.match(filter, /name: 'add-hello'/);
    const tests = read('add-hello', 'src', 'add-hello.test.ts');
    assert.match(tests, /from 'actor-edge\/testing'/);
    assert.match(tests, /runFilter\(factory/, 'a unit test against a fake request');
    assert.match(tests, /await using stack = await startTestStack\(\{ filters: \[new URL\('\.\/add-hello\.js', import\.meta\.url\)\] \}\)/, 'an end-to-end test');
    assert.match(read('add-hello', 'README.md'), /npm test/);
  });

  test('--actor-edge names the dependency; a file: path is read from where the command runs', () => {
    writeFilterProject(root, 'from-tarball', 'file:dist-pack/actor-edge-0.1.0.tgz');
    assert.equal(JSON.parse(read('from-tarball', 'package.json')).devDependencies['actor-edge'], 'file:../dist-pack/actor-edge-0.1.0.tgz');
    writeFilterProject(root, 'from-registry', '^0.1.0');
    assert.equal(JSON.parse(read('from-registry', 'package.json')).devDependencies['actor-edge'], '^0.1.0');
  });

  test('an empty directory is used; a directory with anything in it, or a file, is refused', () => {
    mkdirSync(path.join(root, 'empty'));
    writeFilterProject(root, 'empty');
    assert.match(read('empty', 'src', 'empty.ts'), /name: 'empty'/);
    mkdirSync(path.join(root, 'taken'));
    writeFileSync(path.join(root, 'taken', 'notes.txt'), 'mine');
    assert.throws(() => writeFilterProject(root, 'taken'), (err: Error) => err instanceof UsageError && /taken already exists and is not an empty directory/.test(err.message));
    assert.equal(read('taken', 'notes.txt'), 'mine', 'nothing written over');
    writeFileSync(path.join(root, 'a-file'), '');
    assert.throws(() => writeFilterProject(root, 'a-file'), /already exists and is not an empty directory/);
  });

  test('an invalid name is refused saying what a name may be; a missing or extra NAME, or an unknown flag, too', () => {
    for (const bad of ['My-Filter', '1filter', 'a_b', 'a--b', 'a-', '../up', 'a/b', '', 'x'.repeat(65)]) {
      assert.throws(() => runNewFilter([bad], root, () => undefined), /is not a valid filter name: use lower-case letters, digits and single dashes/, bad);
    }
    assert.throws(() => runNewFilter([], root, () => undefined), /give exactly one NAME/);
    assert.throws(() => runNewFilter(['a', 'b'], root, () => undefined), /give exactly one NAME/);
    assert.throws(() => runNewFilter(['-a'], root, () => undefined), /Unknown option '-a'/);
    assert.throws(() => runNewFilter(['a', '--nope'], root, () => undefined), (err: Error) => err instanceof UsageError && /Usage: actor-edge new-filter/.test(err.message));
    const help: string[] = [];
    runNewFilter(['--help'], root, (t) => void help.push(t));
    assert.match(help.join(''), /Usage: actor-edge new-filter NAME/);
  });
});
