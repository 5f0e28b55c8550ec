// Runs every compiled test file (dist/**/*.test.js) with node's test runner. The files are listed explicitly:
// node 20 searches a folder given as `node --test dist/`, node 22 and later read each argument as a file or glob.
//
// Three files run at a time: many of the end-to-end files spend most of their time waiting on the timeouts they
// test (a slow client's 408, a worker that never answers), so on two cores a third file uses the time two leave
// idle. The files that start processes and wait on them run first, so the last files to start are short ones and
// the run does not end on one long file alone. Neither choice changes what a test checks.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const CONCURRENCY = 3;

/** End-to-end files, the benchmark's smoke runs and the stack/fleet launch tests: each runs for many seconds. */
const LONG_RUNNING = [/(^|\/)e2e\//, /smoke\.test\.js$/, /(^|\/)start-[a-z]+\.test\.js$/, /(^|\/)fleet\/fleet\.test\.js$/];

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const all = readdirSync(dist, { recursive: true })
  .map((f) => String(f).split(path.sep).join('/'))
  .filter((f) => f.endsWith('.test.js') && !f.split('/').includes('node_modules'))
  .sort();
if (all.length === 0) {
  console.error('run-tests: no test files under dist/ (run tsc first)');
  process.exit(1);
}
const isLong = (f) => LONG_RUNNING.some((re) => re.test(f));
const files = [...all.filter(isLong), ...all.filter((f) => !isLong(f))].map((f) => path.join('dist', f));
const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=120000', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
