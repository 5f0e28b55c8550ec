/**
 * The order npm test starts its files in (scripts/test-order.mjs): recorded seconds from the repository's file,
 * overridden by the last run's report, guesses for files in neither, longest first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface TestOrder {
  recordedTimes(reportFile: string, secondsFile?: string): Map<string, number>;
  reportTimes(reportFile: string): Map<string, number>;
  longestFirst(files: string[], dist: string, recorded: ReadonlyMap<string, number>, groups?: Map<string, string[]>): string[];
}

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/test-order.mjs');
const order = (await import(pathToFileURL(SCRIPT).href)) as TestOrder;

test('a file is weighed by the last report, else by the recorded seconds, else by a guess; longest first', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'test-order-'));
  try {
    const dist = path.join(root, 'dist');
    mkdirSync(path.join(dist, 'proxy/e2e'), { recursive: true });
    const names = ['lib/a.test.js', 'lib/b.test.js', 'lib/c.test.js', 'proxy/e2e/d.test.js', 'lib/e.test.js'];
    mkdirSync(path.join(dist, 'lib'));
    for (const n of names) writeFileSync(path.join(dist, n), n === 'lib/e.test.js' ? `// Needs ${'processes'}: x\n` : '\n');
    const seconds = path.join(root, 'seconds.json');
    writeFileSync(seconds, JSON.stringify({ 'lib/a.test.js': 1, 'lib/b.test.js': 20, 'gone/x.test.js': 99 }));
    const report = path.join(root, 'test-times.md');
    writeFileSync(report, '| file | wall s | tests | failed |\n|---|---:|---:|---:|\n| lib/a.test.js | 30.0 | 1 | 0 |\n| lib/c.test.js (shared) | 2.5 | 1 | 0 |\n');

    const times = order.recordedTimes(report, seconds);
    assert.equal(times.get('lib/a.test.js'), 30, 'the report overrides the recorded seconds');
    assert.equal(times.get('lib/b.test.js'), 20, 'the recorded seconds stand where the report is silent');
    assert.equal(times.get('lib/c.test.js'), 2.5, 'a shared file keeps its own time');
    assert.equal(order.recordedTimes(path.join(root, 'none.md'), path.join(root, 'none.json')).size, 0);

    const ordered = order.longestFirst(names.map((n) => path.join(dist, n)), dist, times);
    // a 30 (report), b 20 (recorded), e 8 (guess: processes), d 3 (guess: e2e), c 2.5 (report)
    assert.deepEqual(ordered.map((f) => path.relative(dist, f).split(path.sep).join('/')), ['lib/a.test.js', 'lib/b.test.js', 'lib/e.test.js', 'proxy/e2e/d.test.js', 'lib/c.test.js']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('files that shared a process are weighed by their shares of the group\'s whole wall time', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'test-order-'));
  try {
    const report = path.join(root, 'test-times.md');
    writeFileSync(
      report,
      [
        '| file | wall s | tests | failed |',
        '|---|---:|---:|---:|',
        '| .test-groups/group-1.test.js (one process: lib/c.test.js, lib/f.test.js) | 20.0 | 0 | 0 |',
        '| lib/c.test.js (shared) | 2.5 | 1 | 0 |',
        '| lib/f.test.js (shared) | 7.5 | 1 | 0 |',
        '| .test-groups/group-2.test.js (one process: lib/g.test.js, lib/h.test.js) | 3.0 | 0 | 0 |',
        '| lib/g.test.js (shared) | 0.0 | 1 | 0 |',
        '| lib/h.test.js (shared) | 0.0 | 1 | 0 |',
        '',
      ].join('\n'),
    );
    const times = order.reportTimes(report);
    assert.equal(times.get('lib/c.test.js'), 5);
    assert.equal(times.get('lib/f.test.js'), 15);
    assert.equal(times.get('lib/g.test.js'), 1.5, 'a group whose files took no measurable time splits its wall evenly');
    assert.equal(times.get('lib/h.test.js'), 1.5);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
