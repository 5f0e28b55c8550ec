/**
 * `--workers N` start-up failures end in one line and a non-zero exit: a taken port is told by the primary before any
 * worker starts; a worker that cannot start (a filter that does not load) stops the others, and the primary says so
 * without a stack.
 * Needs processes: the primary forks its workers, and the exit code and output of the whole process are checked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runScript } from '../../lib/testing/run-script.js';
import { takePort } from '../../lib/testing/taken-port.js';

const CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const proxy = (args: string[]) =>
  runScript(CLI, ['proxy', '--admin', '127.0.0.1:0', '--extproc', '127.0.0.1:1', '--workers', '2', ...args], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error' }, timeoutMs: 30_000 });

test('--workers 2 on a taken port: one line naming the port and its setting, exit 1, no stack', async () => {
  const taken = await takePort();
  try {
    const run = await proxy(['--listen', taken.address]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim(), `actor-edge proxy: ${taken.address} is already in use (set PROXY_LISTEN or --listen)`);
  } finally {
    await taken.release();
  }
});

test('--workers 2 with a filter that does not load: the reason, then one line from the primary, exit 1, no stack', async () => {
  const run = await proxy(['--listen', '127.0.0.1:0', '--filter', '/nonexistent/filter.js']);
  assert.notEqual(run.code, 0);
  const lines = run.stderr.trim().split('\n');
  assert.ok(lines.some((l) => l.includes('/nonexistent/filter.js')), run.stderr);
  assert.match(lines.at(-1) ?? '', /^actor-edge: a proxy worker exited during start-up \(code \d+, signal null\); its reason is in the log above$/);
  assert.ok(!/\n\s+at /.test(run.stderr), `no stack trace:\n${run.stderr}`);
});
