// Runs every compiled test file (dist/**/*.test.js) with node's test runner. The files are listed explicitly:
// node 20 searches a folder given as `node --test dist/`, node 22 and later read each argument as a file or glob.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const files = readdirSync(dist, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js') && !f.split(path.sep).includes('node_modules'))
  .sort()
  .map((f) => path.join('dist', f));
if (files.length === 0) {
  console.error('run-tests: no test files under dist/ (run tsc first)');
  process.exit(1);
}
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=120000', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
