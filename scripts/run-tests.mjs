// Runs every compiled test file (dist/**/*.test.js) with node's test runner (its `run()` API), longest first.
//
// Two files per core run at a time (four on two cores, at most eight; TEST_CONCURRENCY overrides): many of the
// end-to-end files spend much of their time waiting on the timeouts they test (a slow client's 408, a worker that
// never answers) or on processes they start, so more files than cores use the time the waiting ones leave idle.
// The files start longest first (`test-order.mjs`), so the suite does not end on one long file running alone while
// the cores idle. Test files that cannot reach past themselves (unit files, and end-to-end and fuzz files that
// start their components in the test's process) share a process, several to a generated group file under
// dist/.test-groups/ (the rule and the group sizes are in `test-groups.mjs`), which saves a process start-up per file;
// each test still reports the file it is declared in. None of this changes what a test checks.
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import testTimes from './test-times.mjs';
import { guessedSeconds, longestFirst, recordedTimes } from './test-order.mjs';
import { GROUP_DIR, groupSource, groupsFor, mustRunAlone } from './test-groups.mjs';

const CONCURRENCY = Number(process.env.TEST_CONCURRENCY) || Math.max(2, Math.min(8, availableParallelism() * 2));
const FILE_TIMEOUT_MS = 120_000;
/**
 * A run not over by then fails, naming the test files still running: on Node 24 a file whose tests are over never
 * ends while something it started is still alive (a timer a failed test never cleared), and the run would wait for
 * it for ever. (node's forceExit would end such a file, but also ends one before the tests it declares late.)
 */
const RUN_LIMIT_MS = 15 * 60_000;

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(root, 'dist');
const files = readdirSync(dist, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js') && !f.split(path.sep).includes('node_modules') && !f.startsWith(GROUP_DIR))
  .map((f) => path.join(dist, f));
if (files.length === 0) {
  console.error('run-tests: no test files under dist/ (run tsc first)');
  process.exit(1);
}
if (process.argv.length > 2) {
  console.error('run-tests: takes no arguments (one file: node --test dist/<path>.test.js)');
  process.exit(2);
}

// The usual report on stdout (spec on a terminal, TAP otherwise, as node's CLI picks), and each file's wall time in
// reports/test-times.md (`test-times.mjs`), which also orders the next run.
const reports = path.join(root, 'reports');
mkdirSync(reports, { recursive: true });
const timesFile = path.join(reports, 'test-times.md');

// The files that may share a process, cut into groups by their last recorded times; each group is one file to run.
const groupDir = path.join(dist, GROUP_DIR);
rmSync(groupDir, { recursive: true, force: true });
mkdirSync(groupDir);
const recorded = recordedTimes(timesFile);
const relativeOf = (file) => path.relative(dist, file).split(path.sep).join('/');
const shareable = files.map(relativeOf).filter((relative) => mustRunAlone(relative, root) === undefined);
const seconds = (relative) => recorded.get(relative) ?? guessedSeconds(relative, '');
const groups = new Map();
groupsFor(shareable, seconds).forEach((members, i) => {
  const groupFile = path.join(groupDir, `group-${i + 1}.test.js`);
  writeFileSync(groupFile, groupSource(members));
  groups.set(groupFile, members);
});
const grouped = new Set([...groups.values()].flat());
const toRun = [...files.filter((f) => !grouped.has(relativeOf(f))), ...groups.keys()];
const order = longestFirst(toRun, dist, recorded, groups);

const events = run({ files: order, concurrency: CONCURRENCY, timeout: FILE_TIMEOUT_MS });
setTimeout(() => {
  const children = childProcesses();
  const names = children.map(({ file }) => `  ${path.relative(dist, file)}${file.includes(GROUP_DIR) ? ` (${(groups.get(file) ?? []).join(', ')})` : ''}`);
  console.error(`run-tests: not over after ${RUN_LIMIT_MS / 60_000} min; still running:\n${names.join('\n') || '  (no test file found among the child processes)'}`);
  for (const { pid } of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  process.exit(1);
}, RUN_LIMIT_MS).unref();
const toConsole = new PassThrough({ objectMode: true });
const toTimes = new PassThrough({ objectMode: true });
let failed = false;
events.on('data', (event) => {
  if (event.type === 'test:fail') failed = true;
  toConsole.write(event);
  toTimes.write(event);
});
events.on('end', () => {
  toConsole.end();
  toTimes.end();
});
// node 20 exports the spec reporter as a class, later lines as a transform ready to use.
const consoleReporter = process.stdout.isTTY ? (typeof spec === 'function' && spec.prototype?._transform !== undefined ? new spec() : spec) : tap;
const printed = new Promise((resolve) => toConsole.compose(consoleReporter).on('end', resolve).pipe(process.stdout, { end: false }));
const timed = new Promise((resolve) => toTimes.compose(testTimes).pipe(createWriteStream(timesFile)).on('finish', resolve));
await Promise.all([printed, timed]);
rmSync(groupDir, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;

/** This run's child processes that run a test file, with their files (Linux's ps; none where it cannot list them). */
function childProcesses() {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .map((words) => ({ pid: Number(words[0]), file: words.find((w) => w.endsWith('.test.js')) }))
      .filter((c) => c.pid > 0 && c.file !== undefined);
  } catch {
    return [];
  }
}
