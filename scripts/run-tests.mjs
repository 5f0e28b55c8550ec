// Runs every compiled test file (dist/**/*.test.js) with node's test runner. The files are listed explicitly:
// node 20 searches a folder given as `node --test dist/`, node 22 and later read each argument as a file or glob.
// The runner sorts the files it is given (node 20 and 24 alike), so the order they are listed in does not matter.
//
// Three files run at a time: many of the end-to-end files spend most of their time waiting on the timeouts they
// test (a slow client's 408, a worker that never answers), so on two cores a third file uses the time two leave
// idle. That does not change what a test checks.
import { mkdirSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const CONCURRENCY = 3;

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const files = readdirSync(dist, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js') && !f.split(path.sep).includes('node_modules'))
  .map((f) => path.join('dist', f));
if (files.length === 0) {
  console.error('run-tests: no test files under dist/ (run tsc first)');
  process.exit(1);
}
// The usual report on stdout (spec on a terminal, TAP otherwise, as node picks by default), and each file's wall
// time in reports/test-times.md (`test-times.mjs`).
const reports = fileURLToPath(new URL('../reports', import.meta.url));
mkdirSync(reports, { recursive: true });
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
  `--test-reporter=${fileURLToPath(new URL('./test-times.mjs', import.meta.url))}`, `--test-reporter-destination=${path.join(reports, 'test-times.md')}`,
];
const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=120000', ...reporters, ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
