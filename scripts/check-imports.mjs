// Checks the TypeScript sources' relative imports before they are compiled (run by `npm test`):
// - no import cycles, between files and between the proxy's folders (`proxy/<folder>/`: no folder imports one that
//   imports it back, directly or through others; test code left out);
// - lib/ imports nothing outside lib/ (shared pieces depend on no component, nor on the CLI);
// - code that is not test code imports no test helper (testing/ or e2e/ folders, *.test.ts);
// - no import runs back up into a parent's test helpers: a file under `A/x/` (any depth below a subfolder `x` of
//   `A`, `x` not `testing`) that is not a test file (`*.test.ts`) imports nothing from `A/testing/`. A test file may
//   use the harness of a folder above it; a helper or a tool inside a component may not, so a component's own
//   helpers build only on its own `testing/` (and the shared `lib/testing/`, whose `lib/` is no parent of the
//   others), and a tool built on the harness lives where nothing depends on it (`scripts/testing/`);
// - `node --test` runs only *.test files: no other file matches its default test-file patterns;
// - tracing's SDK is loaded only when tracing is on: only lib/tracing/provider.ts imports an SDK package (any
//   `@opentelemetry/` package but the API, the semantic conventions included: the spans take their names from
//   lib/tracing/semconv.ts), and production code imports provider.ts only with `import()` (lib/tracing/load.ts) or
//   for its types.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { include } = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));

const sources = include.flatMap((dir) =>
  readdirSync(path.join(ROOT, dir), { recursive: true })
    .map((f) => path.join(dir, String(f)).split(path.sep).join('/'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
);

const IMPORT = [/\b(?:import|export)\s[^;]*?\bfrom\s*['"](\.[^'"]+)['"]/g, /\bimport\s*['"](\.[^'"]+)['"]/g, /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g];

function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The source file a relative import in `file` names (`.js` resolved to the `.ts` source). */
const resolveRelative = (file, spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts');

/** file → its text without comments (read once; every rule below reads it from here). */
const texts = new Map(sources.map((file) => [file, withoutComments(readFileSync(path.join(ROOT, file), 'utf8'))]));

/** file → the source files it imports (relative imports only). */
const graph = new Map();
const problems = [];
for (const file of sources) {
  const text = texts.get(file);
  const targets = new Set();
  for (const re of IMPORT) {
    for (const m of text.matchAll(re)) {
      const target = resolveRelative(file, m[1]);
      if (!existsSync(path.join(ROOT, target))) problems.push(`${file}: imports ${m[1]}, which has no source file`);
      else targets.add(target);
    }
  }
  graph.set(file, [...targets]);
}

const isTestCode = (f) => /(^|\/)(testing|e2e)\//.test(f) || /\.test\.ts$/.test(f);
for (const [file, targets] of graph) {
  for (const t of targets) {
    if (file.startsWith('lib/') && !t.startsWith('lib/')) problems.push(`${file}: lib/ must not import ${t}`);
    if (!isTestCode(file) && isTestCode(t)) problems.push(`${file}: production code must not import the test helper ${t}`);
  }
}

/** `A/` when `target` is in `A/testing/` and `file` is under `A/x/` with `x` not `testing`; else undefined. */
function parentHarness(file, target) {
  const m = /^(.*\/)?testing\//.exec(target);
  if (m === null) return undefined;
  const owner = m[1] ?? '';
  const below = path.posix.dirname(file) + '/';
  if (!below.startsWith(owner)) return undefined;
  const rest = below.slice(owner.length);
  return rest === '' || rest.startsWith('testing/') ? undefined : owner;
}
for (const [file, targets] of graph) {
  if (file.endsWith('.test.ts')) continue;
  for (const t of targets) {
    const owner = parentHarness(file, t);
    if (owner !== undefined) problems.push(`${file}: imports ${t}, a test helper of its parent folder ${owner} (only test files may reach up)`);
  }
}

const PROVIDER = 'lib/tracing/provider.ts';
const SDK = /^@opentelemetry\/(?!api$)/;
const STATIC = /\b(import|export)\s+(type\s+)?(?:[^;'"]*?\bfrom\s*)?['"]([^'"]+)['"]/g;
for (const file of sources) {
  if (isTestCode(file)) continue;
  for (const m of texts.get(file).matchAll(STATIC)) {
    if (m[2] !== undefined) continue; // `import type`: erased
    const spec = m[3];
    if (spec === '@opentelemetry/semantic-conventions' && file !== PROVIDER) {
      problems.push(`${file}: imports ${spec} (about 50 ms of CPU at every start); take the attribute names from lib/tracing/semconv.ts`);
    } else if (SDK.test(spec) && file !== PROVIDER) problems.push(`${file}: imports the tracing SDK (${spec}); only ${PROVIDER} may, loaded when tracing is on`);
    if (spec.startsWith('.') && resolveRelative(file, spec) === PROVIDER) {
      problems.push(`${file}: imports ${PROVIDER} statically; load it with import() (lib/tracing/load.ts) so tracing off never loads the SDK`);
    }
  }
}

// The patterns node's test runner uses to find test files in a folder.
const RUNNER = [/(^|\/)test\//, /(^|\/)test-[^/]*$/, /(^|\/)test\.[^/]*$/, /[-_.]test\.[^/]*$/];
for (const file of sources) {
  if (RUNNER.some((re) => re.test(file)) && !file.endsWith('.test.ts')) problems.push(`${file}: node --test would run it as a test`);
}

// Depth-first search; a back edge closes a cycle.
const state = new Map(); // file → 'open' | 'done'
const stack = [];
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const t of graph.get(file) ?? []) {
    if (state.get(t) === 'open') problems.push(`import cycle: ${[...stack.slice(stack.indexOf(t)), t].join(' → ')}`);
    else if (!state.has(t)) visit(t);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file);

// Folder level, inside proxy/: each folder (or top-level file) is one node; production code only.
const folderOf = (f) => {
  const parts = f.split('/');
  return parts[0] === 'proxy' ? (parts.length > 2 ? `proxy/${parts[1]}/` : f) : undefined;
};
const folders = new Map(); // folder → Map(folder → an import that makes the arrow)
for (const [file, targets] of graph) {
  const from = folderOf(file);
  if (from === undefined || isTestCode(file)) continue;
  for (const t of targets) {
    const to = folderOf(t);
    if (to === undefined || to === from || isTestCode(t)) continue;
    if (!folders.has(from)) folders.set(from, new Map());
    if (!folders.get(from).has(to)) folders.get(from).set(to, `${file} → ${t}`);
  }
}
const folderState = new Map();
const folderStack = [];
function visitFolder(folder) {
  folderState.set(folder, 'open');
  folderStack.push(folder);
  for (const [t, why] of folders.get(folder) ?? []) {
    if (folderState.get(t) === 'open') {
      const loop = [...folderStack.slice(folderStack.indexOf(t)), t];
      problems.push(`folder cycle: ${loop.join(' → ')} (closed by ${why})`);
    } else if (!folderState.has(t)) visitFolder(t);
  }
  folderStack.pop();
  folderState.set(folder, 'done');
}
for (const folder of folders.keys()) if (!folderState.has(folder)) visitFolder(folder);

if (problems.length > 0) {
  process.stderr.write(`check-imports: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`check-imports: ${sources.length} files, no cycles between files or between proxy/ folders, layering kept, no import running back up into a parent's test helpers\n`);
