// Which test files `npm test` may run together in one process, and the group files that do it.
//
// Starting a node process for a test file costs about 0.3 s of CPU, more than most unit files spend on their tests,
// so small unit files run several to a process: a generated group file (under dist/.test-groups/) imports them in
// turn, and node's test runner runs it as one file. Each test still reports its own file (node:test names the file
// a test was declared in), so a failure names the file it is in, and the times report lists every file.
//
// A file may share a process when its TypeScript source, read as text, shows none of what would reach past it:
//   - it is not under e2e/ or fuzz/ (those start stacks, processes and long-lived servers);
//   - no top-level hook (`before(`, `after(`, `beforeEach(`, `afterEach(` at the start of a line): in a shared
//     process it would run around every file's tests;
//   - no `mock` imported from node:test (the process-wide tracker is not restored between files; `t.mock` is) and
//     no `mock.timers`;
//   - no write to process.env, no process.on/once/exit/exitCode/kill/chdir/umask, no assignment to a property of a
//     built-in global (globalThis, Date, Math, console, Error, Promise, process);
//   - no child processes, cluster or `Needs processes:` in the file or in the testing helpers it imports
//     (any module under a `testing/` folder, followed through their own imports); a file that starts processes
//     through a product module (a launcher) says so with its `Needs processes:` line, as the end-to-end files do;
//   - nothing that reads the whole process's state: active handles/resources, memory or CPU usage, gc.
// Anything else runs in its own process, as before. Hooks inside a `describe` are the suite's own and may share. A
// testing helper that keeps a fixture for the whole process (a test PKI) forgets it when a file closes it, so the
// next file of the group builds its own. The files of a group run one after another, in path order.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Why `relative` (a test file's path under dist/, `/`-separated) must run alone, or undefined when it may share. */
export function mustRunAlone(relative, root) {
  if (/(^|\/)(e2e|fuzz)\//.test(relative)) return 'e2e or fuzz';
  const source = path.join(root, relative.replace(/\.js$/, '.ts'));
  if (!existsSync(source)) return 'no TypeScript source';
  const text = readFileSync(source, 'utf8');
  const own = ownReason(text);
  if (own !== undefined) return own;
  for (const helper of testingHelpers(source, root)) {
    if (PROCESSES.test(readFileSync(helper, 'utf8'))) return `processes in ${path.relative(root, helper)}`;
  }
  return undefined;
}

const PROCESSES = /child_process|node:cluster|Needs processes:/;

/** @returns {string | undefined} */
function ownReason(text) {
  if (/^(before|after|beforeEach|afterEach)\(/m.test(text)) return 'top-level hook';
  if (/import\s*\{[^}]*\bmock\b[^}]*\}\s*from\s*'node:test'/.test(text) || /\bmock\.timers\b/.test(text)) return 'process-wide mock';
  if (/process\.env(\.\w+|\[[^\]]+\])\s*(=(?!=)|\+\+|--)|delete\s+process\.env|Object\.assign\(\s*process\.env/.test(text)) return 'writes process.env';
  if (/process\.(on|once|off|addListener|removeListener|removeAllListeners|exit|exitCode|kill|chdir|umask)\b/.test(text)) return 'process-wide listener or exit';
  if (/\b(globalThis|global|Date|Math|console|Error|Promise|process)\.[\w.]+\s*=(?!=)/.test(text)) return 'assigns a global';
  if (PROCESSES.test(text)) return 'child processes';
  if (/getActiveResourcesInfo|_getActiveHandles|_getActiveRequests|memoryUsage|cpuUsage|resourceUsage|\bgc\(/.test(text)) return 'reads process-wide state';
  return undefined;
}

/** The modules under a `testing/` folder that `source` reaches through relative imports of testing modules. */
function testingHelpers(source, root) {
  const seen = new Set();
  const queue = [source];
  while (queue.length > 0) {
    const file = queue.pop();
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g)) {
      const target = path.resolve(path.dirname(file), `${m[1]}.ts`);
      if (seen.has(target) || !existsSync(target) || !target.split(path.sep).includes('testing')) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return [...seen].filter((f) => f.startsWith(root));
}

/**
 * `files` (relative to dist/, `/`-separated) that may share, cut into groups in path order, each at most
 * `maxSeconds` by `seconds(file)` and at most `maxFiles` files. Groups of one are left out (they gain nothing).
 */
export function groupsOf(files, seconds, { maxSeconds, maxFiles }) {
  const groups = [];
  let current = [];
  let total = 0;
  for (const file of [...files].sort()) {
    const s = seconds(file);
    if (current.length > 0 && (total + s > maxSeconds || current.length >= maxFiles)) {
      groups.push(current);
      current = [];
      total = 0;
    }
    current.push(file);
    total += s;
  }
  if (current.length > 0) groups.push(current);
  return groups.filter((g) => g.length > 1);
}

/** The text of a group file at dist/.test-groups/ importing `files` (relative to dist/) in order. */
export function groupSource(files) {
  const lines = ['// Generated by scripts/run-tests.mjs: test files that share one process (scripts/test-groups.mjs).'];
  for (const f of files) lines.push(`import '../${f}';`);
  return `${lines.join('\n')}\n`;
}

/** The folder under dist/ that holds the group files, and how a group's name reads its files back. */
export const GROUP_DIR = '.test-groups';
export function membersOf(groupText) {
  return [...groupText.matchAll(/^import '\.\.\/(.+)';$/gm)].map((m) => m[1]);
}
