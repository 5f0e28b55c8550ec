// Which test files `npm test` may run together in one process, and the group files that do it.
//
// Starting a node process for a test file costs about 0.3 s of CPU, more than most unit files spend on their tests,
// so small unit files run several to a process: a generated group file (under dist/.test-groups/) imports them in
// turn, and node's test runner runs it as one file. Each test still reports its own file (node:test names the file
// a test was declared in), so a failure names the file it is in, and the times report lists every file.
//
// A file may share a process when its TypeScript source, read as text, shows none of what would reach past it. The
// same checks hold for unit files and for end-to-end and fuzz files (e2e/, fuzz/): those start the stub, extproc
// and proxies in the test's process and close them in their hooks, which is no more process-wide than a unit test's
// server, as long as the hooks are the file's own:
//   - no top-level hook (`before(`, `after(`, `beforeEach(`, `afterEach(` at the start of a line): in a shared
//     process it would run around every file's tests (an end-to-end file keeps its hooks inside one `describe`);
//   - no `mock` imported from node:test (the process-wide tracker is not restored between files; `t.mock` is) and
//     no `mock.timers`;
//   - no write to process.env, no process.on/once/exit/exitCode/kill/chdir/umask/setMaxListeners, no assignment to a
//     property of a built-in global (globalThis, Date, Math, console, Error, Promise, process);
//   - no process-wide setting, in the file or in a testing helper it imports: OpenTelemetry's globals (a global
//     tracer provider, propagator or context manager, `diag.setLogger`, a provider's `register()`), the product's
//     tracing turned on for components in this process (`OTEL_TRACES_EXPORTER`: its start sets OpenTelemetry's
//     global diag logger), `http.globalAgent`/`https.globalAgent`, undici's `setGlobalDispatcher`, the default
//     listener limit (`EventEmitter.defaultMaxListeners`, `setMaxListeners(n)` with no target), `Error.stackTraceLimit`,
//     `tls.DEFAULT_*`, V8 flags (`v8.setFlagsFromString`);
//   - it starts no process of the product: no `Needs processes:` line (the explicit marker of a file that starts
//     processes, through a product launcher or otherwise), no node:cluster, no component started as a process
//     (`mode: 'process'`, `process: true`), and no child process that runs node (`process.execPath`, `fork`, a
//     `node`/`npm`/`npx` command) in the file or in the testing helpers it imports (any module under a `testing/`
//     folder, followed through their own imports). A short-lived external tool run to its end through node:child_process
//     (openssl in `proxy/testing/throwaway-ca.ts`, curl, h2load, sh) is not process-wide: it holds no state of this
//     process and is gone when its call returns, so it does not keep its file (or a helper's importers) alone;
//   - nothing that reads the whole process's state: active handles/resources, memory or CPU usage, gc;
//   - no `Runs alone:` line: a file that passes the checks above but leaves something behind that shows only when
//     it shares (a handle that keeps the process alive, state the next file sees) says why in its header.
// Anything else runs in its own process, as before. Hooks inside a `describe` are the suite's own and may share. A
// testing helper that keeps a fixture for the whole process (a test PKI) forgets it when a file closes it, so the
// next file of the group builds its own. The files of a group run one after another, in path order.
//
// The product code these files start in the test's process was read for the same: it sets `Error.stackTraceLimit`
// only around a synchronous call (the ext_proc client restores it before it returns), and `--expose-gc` once for the
// body GC pacer (the same in every proxy, with no global `gc`); its tracing start is the OpenTelemetry case above.
//
// End-to-end and fuzz files wait on timers and sockets more than they compute, so they are grouped apart from unit
// files and by their own limits (`E2E_GROUP_LIMITS`: fewer files to a group): a group runs its files one after
// another, and must not become the longest item of the run.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Why `relative` (a test file's path under dist/, `/`-separated) must run alone, or undefined when it may share. */
export function mustRunAlone(relative, root) {
  const source = path.join(root, relative.replace(/\.js$/, '.ts'));
  if (!existsSync(source)) return 'no TypeScript source';
  const text = readFileSync(source, 'utf8');
  const own = ownReason(text);
  if (own !== undefined) return own;
  for (const helper of testingHelpers(source, root)) {
    const reason = helperReason(readFileSync(helper, 'utf8'));
    if (reason !== undefined) return `${reason} in ${path.relative(root, helper)}`;
  }
  return undefined;
}

/** Whether `relative` (under dist/) is an end-to-end or fuzz file, grouped by `E2E_GROUP_LIMITS`. */
export function isEndToEnd(relative) {
  return /(^|\/)(e2e|fuzz)\//.test(relative);
}

/**
 * Starts a process of the product: the explicit marker, node:cluster, node as a child process, or (`own`: the test
 * file's text, not a helper's, since the helpers offer both ways) a component started as a process.
 */
function startsProcesses(text, own) {
  if (/Needs processes:|node:cluster/.test(text)) return true;
  if (own && /mode:\s*'process'|\bprocess:\s*true\b/.test(text)) return true;
  return /child_process/.test(text) && /process\.execPath|process\.argv0|\bfork\b|(['"`])(node|npm|npx)\1/.test(text);
}

const SETTINGS = new RegExp(
  [
    String.raw`\bsetGlobal(TracerProvider|Propagator|ContextManager|MeterProvider|LoggerProvider|Dispatcher)\(`,
    String.raw`\bdiag\.setLogger\(`,
    String.raw`\b\w*[pP]rovider\.register\(`,
    String.raw`\bhttps?\.globalAgent\b`,
    String.raw`\bdefaultMaxListeners\s*=(?!=)`,
    String.raw`(^|[^.\w]|\b(events|EventEmitter)\.)setMaxListeners\(\s*[\w.]+\s*\)`,
    String.raw`\bprocess\.setMaxListeners\b`,
    String.raw`\bError\.stackTraceLimit\s*=(?!=)`,
    String.raw`\btls\.DEFAULT_\w+\s*=(?!=)`,
    String.raw`\bsetFlagsFromString\(`,
  ].join('|'),
);

/** Sets something for the whole process (`SETTINGS`), or turns the product's tracing on for components it starts. */
function setsProcessWide(text, helper) {
  if (SETTINGS.test(text)) return true;
  return /OTEL_TRACES_EXPORTER/.test(text) && (helper || /\bstart\w*(Stack|Proxy|InProcess)\(/.test(text));
}

/** @returns {string | undefined} */
function ownReason(text) {
  const alone = /^\s*(?:\/\/|\/?\*+)\s*Runs alone:\s*(.*)$/m.exec(text);
  if (alone) return `runs alone: ${alone[1].replace(/\s*\*\/\s*$/, '').trim()}`;
  if (/^(before|after|beforeEach|afterEach)\(/m.test(text)) return 'top-level hook';
  if (/import\s*\{[^}]*\bmock\b[^}]*\}\s*from\s*'node:test'/.test(text) || /\bmock\.timers\b/.test(text)) return 'process-wide mock';
  if (/process\.env(\.\w+|\[[^\]]+\])\s*(=(?!=)|\+\+|--)|delete\s+process\.env|Object\.assign\(\s*process\.env/.test(text)) return 'writes process.env';
  if (/process\.(on|once|off|addListener|removeListener|removeAllListeners|exit|exitCode|kill|chdir|umask)\b/.test(text)) return 'process-wide listener or exit';
  if (setsProcessWide(text, false)) return 'process-wide setting';
  if (/\b(globalThis|global|Date|Math|console|Error|Promise|process)\.[\w.]+\s*=(?!=)/.test(text)) return 'assigns a global';
  if (startsProcesses(text, true)) return 'starts processes';
  if (/getActiveResourcesInfo|_getActiveHandles|_getActiveRequests|memoryUsage|cpuUsage|resourceUsage|\bgc\(/.test(text)) return 'reads process-wide state';
  return undefined;
}

/** @returns {string | undefined} What a testing helper does that its importers would carry into a shared process. */
function helperReason(text) {
  if (startsProcesses(text, false)) return 'starts processes';
  if (setsProcessWide(text, true)) return 'process-wide setting';
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

/**
 * The groups `npm test` runs: unit files by `UNIT_GROUP_LIMITS`, end-to-end and fuzz files (`isEndToEnd`) apart, by
 * `E2E_GROUP_LIMITS`. A unit group adds up many short files. An end-to-end file waits on timers and sockets and a
 * group runs its files one after another, so its groups stay short (their sum of recorded walls, each of which counts
 * its own process's start-up the group saves) and few-membered, well under the run's longest files, and a group
 * never becomes the run's critical path.
 */
export const UNIT_GROUP_LIMITS = Object.freeze({ maxSeconds: 15, maxFiles: 40 });
export const E2E_GROUP_LIMITS = Object.freeze({ maxSeconds: 18, maxFiles: 12 });
export function groupsFor(shareable, seconds) {
  const e2e = shareable.filter(isEndToEnd);
  const unit = shareable.filter((f) => !isEndToEnd(f));
  return [...groupsOf(unit, seconds, UNIT_GROUP_LIMITS), ...groupsOf(e2e, seconds, E2E_GROUP_LIMITS)];
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
