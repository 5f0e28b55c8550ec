import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadUserFilter, filterSpec } from './load-filters.js';
import { moduleFormat } from './filter-module.js';
import { pathToFileURL } from 'node:url';

// Each case is a small project of its own, as a filter author's would be: a package.json (or none) and one module.
const root = mkdtempSync(path.join(tmpdir(), 'filter-module-'));
describe('filter-module', () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  let n = 0;
  function project(pkg: Record<string, unknown> | undefined, file: string, source: string): string {
    const dir = path.join(root, `p${n++}`);
    mkdirSync(dir);
    if (pkg !== undefined) writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
    writeFileSync(path.join(dir, file), source);
    return path.join(dir, file);
  }

  const load = (module: string) => loadUserFilter(filterSpec(module), { log: pino({ level: 'silent' }), actorSuffix: 'actors.example' });
  const FACTORY = `() => ({ name: 'cjs-filter' })`;

  test('a CommonJS module whose module.exports is the factory loads', async () => {
    const f = await load(project({ name: 'x' }, 'f.js', `module.exports = ${FACTORY};`));
    assert.equal(f.name, 'cjs-filter');
  });

  test('a CommonJS module as tsc compiles `export default factory` (exports.default) loads', async () => {
    const tscOutput = `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.default = ${FACTORY};\n`;
    assert.equal((await load(project({ name: 'x' }, 'f.js', tscOutput))).name, 'cjs-filter');
    assert.equal((await load(project({ name: 'x', type: 'module' }, 'f.cjs', tscOutput))).name, 'cjs-filter', 'a .cjs file in an ES package');
  });

  test('a CommonJS module that exports no factory is refused naming CommonJS, its package.json and both fixes', async () => {
    const file = project({ name: 'x' }, 'f.js', `exports.filter = ${FACTORY};`);
    await assert.rejects(load(file), (err: Error) => {
      assert.match(err.message, /this module is CommonJS \(its package\.json \(.*package\.json\) has no "type": "module"\) and exports no filter factory/);
      assert.match(err.message, /module\.exports = factory/);
      assert.match(err.message, /set "type": "module"/);
      return true;
    });
    await assert.rejects(load(project(undefined, 'f.cjs', 'module.exports = 42;')), /this module is CommonJS \(a \.cjs file\) and exports no filter factory/);
  });

  test('an ES module without a default export, or with one that is not a function, is refused saying so', async () => {
    await assert.rejects(load(project({ type: 'module' }, 'f.js', `export const factory = ${FACTORY};`)), /has no default export: the default export must be a filter factory function/);
    await assert.rejects(load(project({ type: 'module' }, 'f.js', 'export default { name: "x" };')), /the default export must be a filter factory function \(it is an object\)/);
    await assert.rejects(load(project(undefined, 'f.mjs', 'export default 42;')), /the default export must be a filter factory function \(it is a number\)/);
  });

  test('moduleFormat follows node: the extension first, then the nearest package.json\'s "type"', () => {
    const url = (p: string) => pathToFileURL(p).href;
    assert.equal(moduleFormat(url(project({ type: 'module' }, 'a.js', '')))?.kind, 'module');
    assert.equal(moduleFormat(url(project({ type: 'commonjs' }, 'a.js', '')))?.kind, 'commonjs');
    assert.equal(moduleFormat(url(project({ type: 'module' }, 'a.cjs', '')))?.kind, 'commonjs');
    assert.equal(moduleFormat(`${url(project({}, 'a.mjs', ''))}?reload=2`)?.kind, 'module', 'a reload URL keeps its file');
    assert.equal(moduleFormat('data:text/javascript,export default 1'), undefined);
  });
});
