/**
 * Which test files `npm test` runs several to a process (scripts/test-groups.mjs): the rule read from a file's
 * source (end-to-end and fuzz files by the same checks), on a scratch project, and how the files are cut into groups
 * (end-to-end ones apart) and read back from a group file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface TestGroups {
  mustRunAlone(relative: string, root: string): string | undefined;
  groupsFor(files: readonly string[], seconds: (file: string) => number): string[][];
  groupsOf(files: readonly string[], seconds: (file: string) => number, limits: { maxSeconds: number; maxFiles: number }): string[][];
  groupSource(files: readonly string[]): string;
  membersOf(groupText: string): string[];
}

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/test-groups.mjs');
const groups = (await import(pathToFileURL(SCRIPT).href)) as TestGroups;

const UNIT = "import { test } from 'node:test';\ntest('t', () => {});\n";
/** `from '<spec>'` of an import in a scratch file (spelled so, this file's own imports stay its real ones). */
const from = (spec: string): string => `from '${spec}'`;

test('a file may share a process only when its source and its testing helpers reach nothing past it', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'test-groups-'));
  try {
    const files: Record<string, string> = {
      'lib/plain.test.ts': UNIT,
      'lib/scoped-hooks.test.ts': "import { after, before, describe, test } from 'node:test';\ndescribe('d', () => {\n  before(() => {});\n  after(() => {});\n  test('t', () => {});\n});\n",
      'lib/top-hook.test.ts': "import { before, test } from 'node:test';\nbefore(() => {});\ntest('t', () => {});\n",
      'lib/each-hook.test.ts': "import { afterEach, test } from 'node:test';\nafterEach(() => {});\ntest('t', () => {});\n",
      'lib/global-mock.test.ts': "import { mock, test } from 'node:test';\ntest('t', () => { mock.method(Date, 'now'); });\n",
      'lib/context-mock.test.ts': "import { test } from 'node:test';\ntest('t', (t) => { t.mock.method(Date, 'now'); });\n",
      'lib/env.test.ts': `${UNIT}process.env.LOG_LEVEL = 'debug';\n`,
      'lib/env-read.test.ts': `${UNIT}const level = process.env.LOG_LEVEL === 'debug';\n`,
      'lib/listener.test.ts': `${UNIT}process.on('warning', () => {});\n`,
      'lib/global.test.ts': `${UNIT}globalThis.fetch = undefined;\n`,
      'lib/spawns.test.ts': `import { spawn } from 'node:child_process';\n${UNIT}spawn('h2load', ['--version']);\n`,
      'lib/needs.test.ts': `/** Needs processes: it sends SIGTERM. */\n${UNIT}`,
      'lib/handles.test.ts': `${UNIT}process.getActiveResourcesInfo();\n`,
      'lib/via-helper.test.ts': `import { run } ${from('./testing/outer.js')};\n${UNIT}`,
      'lib/testing/outer.ts': `export { run } ${from('./inner.js')};\n`,
      'lib/testing/inner.ts': "import { execFile } from 'node:child_process';\nexport const run = (script: string) => execFile(process.execPath, [script]);\n",
      'lib/via-product.test.ts': `import { x } ${from('./product.js')};\n${UNIT}`,
      'lib/product.ts': "import { execFile } from 'node:child_process';\nexport const x = execFile;\n",
      'lib/exec-tool.test.ts': `import { execFile } from 'node:child_process';\n${UNIT}execFile('curl', ['--version']);\n`,
      'lib/exec-node.test.ts': `import { execFile } from 'node:child_process';\n${UNIT}execFile(process.execPath, ['-v']);\n`,
      'lib/stack-trace-limit.test.ts': `${UNIT}Error.stackTraceLimit = 0;\n`,
      'lib/max-listeners.test.ts': `import { setMaxListeners } from 'node:events';\n${UNIT}setMaxListeners(50);\n`,
      'lib/signal-listeners.test.ts': `import { setMaxListeners } from 'node:events';\n${UNIT}setMaxListeners(0, new AbortController().signal);\n`,
      'lib/runs-alone.test.ts': `/**\n * Runs alone: its server outlives its tests.\n */\n${UNIT}`,
      'proxy/e2e/stack.test.ts': "import { after, before, describe, test } from 'node:test';\ndescribe('the stack', () => {\n  before(() => {});\n  after(() => {});\n  test('t', () => {});\n});\n",
      'proxy/e2e/top-hooks.test.ts': "import { after, before, test } from 'node:test';\nbefore(() => {});\nafter(() => {});\ntest('t', () => {});\n",
      'proxy/e2e/signals.test.ts': `/**\n * Needs processes: it sends SIGTERM to the proxy.\n */\nimport { describe, test } from 'node:test';\ndescribe('d', () => test('t', () => {}));\n`,
      'proxy/e2e/workers.test.ts': `import { startStack } ${from('../testing/stack.js')};\n${UNIT}void startStack({ mode: 'process' });\n`,
      'proxy/e2e/tracer.test.ts': `import { trace } from '@opentelemetry/api';\n${UNIT}trace.setGlobalTracerProvider(provider);\n`,
      'proxy/e2e/propagator.test.ts': `import { propagation } from '@opentelemetry/api';\n${UNIT}propagation.setGlobalPropagator(p);\n`,
      'proxy/e2e/dispatcher.test.ts': `import { setGlobalDispatcher } from 'undici';\n${UNIT}setGlobalDispatcher(agent);\n`,
      'proxy/e2e/traced.test.ts': `import { receiverEnv } ${from('../testing/otlp.js')};\n${UNIT}`,
      'proxy/testing/otlp.ts': "export const receiverEnv = { OTEL_TRACES_EXPORTER: 'otlp' };\n",
      'proxy/e2e/tls-tool.test.ts': `import { createTestCa } ${from('../testing/throwaway-ca.js')};\n${UNIT}`,
      'proxy/testing/throwaway-ca.ts': "import { execFile } from 'node:child_process';\nimport { promisify } from 'node:util';\nconst run = promisify(execFile);\nexport const createTestCa = () => run('openssl', ['req', '-x509']);\n",
      'proxy/e2e/node-helper.test.ts': `import { runNode } ${from('../testing/node-runner.js')};\n${UNIT}`,
      'proxy/testing/node-runner.ts': "import { spawn } from 'node:child_process';\nexport const runNode = (script: string) => spawn('node', [script]);\n",
      'proxy/e2e/stack-helper.test.ts': `import { startStack } ${from('../testing/stack.js')};\n${UNIT}void startStack();\n`,
      'proxy/testing/stack.ts': "/** In the test's process, or as processes (`mode: 'process'`). */\nexport const startStack = (opts?: { mode?: 'process' }) => opts;\n",
      'proxy/testing/fuzz/wire.test.ts': UNIT,
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    const verdict = (file: string): string | undefined => groups.mustRunAlone(file.replace(/\.ts$/, '.js'), root);
    const shares = [
      'lib/plain.test.ts',
      'lib/scoped-hooks.test.ts',
      'lib/context-mock.test.ts',
      'lib/env-read.test.ts',
      'lib/via-product.test.ts',
      'lib/exec-tool.test.ts',
      'lib/spawns.test.ts',
      'lib/signal-listeners.test.ts',
      'proxy/e2e/stack.test.ts',
      'proxy/e2e/tls-tool.test.ts',
      'proxy/e2e/stack-helper.test.ts',
      'proxy/testing/fuzz/wire.test.ts',
    ];
    for (const file of shares) assert.equal(verdict(file), undefined, file);
    const alone: Record<string, string> = {
      'lib/top-hook.test.ts': 'top-level hook',
      'lib/each-hook.test.ts': 'top-level hook',
      'lib/global-mock.test.ts': 'process-wide mock',
      'lib/env.test.ts': 'writes process.env',
      'lib/listener.test.ts': 'process-wide listener or exit',
      'lib/global.test.ts': 'assigns a global',
      'lib/needs.test.ts': 'starts processes',
      'lib/exec-node.test.ts': 'starts processes',
      'lib/handles.test.ts': 'reads process-wide state',
      'lib/stack-trace-limit.test.ts': 'process-wide setting',
      'lib/max-listeners.test.ts': 'process-wide setting',
      'lib/runs-alone.test.ts': 'runs alone: its server outlives its tests.',
      'lib/via-helper.test.ts': `starts processes in ${path.join('lib', 'testing', 'inner.ts')}`,
      'proxy/e2e/top-hooks.test.ts': 'top-level hook',
      'proxy/e2e/signals.test.ts': 'starts processes',
      'proxy/e2e/workers.test.ts': 'starts processes',
      'proxy/e2e/tracer.test.ts': 'process-wide setting',
      'proxy/e2e/propagator.test.ts': 'process-wide setting',
      'proxy/e2e/dispatcher.test.ts': 'process-wide setting',
      'proxy/e2e/traced.test.ts': `process-wide setting in ${path.join('proxy', 'testing', 'otlp.ts')}`,
      'proxy/e2e/node-helper.test.ts': `starts processes in ${path.join('proxy', 'testing', 'node-runner.ts')}`,
      'lib/missing.test.ts': 'no TypeScript source',
    };
    for (const [file, reason] of Object.entries(alone)) assert.equal(verdict(file), reason, file);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('files are cut into groups in path order, by seconds and by count; a group of one is left out', () => {
  const seconds: Record<string, number> = { 'a.test.js': 4, 'b.test.js': 4, 'c.test.js': 4, 'd.test.js': 1, 'e.test.js': 1, 'f.test.js': 1, 'g.test.js': 9 };
  const cut = groups.groupsOf(Object.keys(seconds).reverse(), (f) => seconds[f] ?? 0, { maxSeconds: 9, maxFiles: 3 });
  assert.deepEqual(cut, [['a.test.js', 'b.test.js'], ['c.test.js', 'd.test.js', 'e.test.js']]);
  assert.deepEqual(groups.groupsOf(['x.test.js'], () => 1, { maxSeconds: 9, maxFiles: 3 }), []);
});

test('end-to-end and fuzz files are grouped apart from unit files, by their own limits', () => {
  const files = ['lib/a.test.js', 'lib/b.test.js', 'proxy/e2e/c.test.js', 'proxy/e2e/d.test.js', 'proxy/e2e/e.test.js', 'proxy/fuzz/f.fuzz.test.js'];
  const seconds: Record<string, number> = { 'lib/a.test.js': 6, 'lib/b.test.js': 4, 'proxy/e2e/c.test.js': 8, 'proxy/e2e/d.test.js': 9, 'proxy/e2e/e.test.js': 2, 'proxy/fuzz/f.fuzz.test.js': 3 };
  const cut = groups.groupsFor(files, (f) => seconds[f] ?? 0);
  // The unit files make one group of 10 s (at most 15); the end-to-end ones never join it, and stop at 18 s a group.
  assert.deepEqual(cut, [['lib/a.test.js', 'lib/b.test.js'], ['proxy/e2e/c.test.js', 'proxy/e2e/d.test.js'], ['proxy/e2e/e.test.js', 'proxy/fuzz/f.fuzz.test.js']]);
});

test('a group file imports its files in order, and its text names them back', () => {
  const members = ['lib/a.test.js', 'proxy/edge/b.test.js'];
  const text = groups.groupSource(members);
  assert.match(text, /^import '\.\.\/lib\/a\.test\.js';$/m);
  assert.deepEqual(groups.membersOf(text), members);
});
