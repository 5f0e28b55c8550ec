// Keeps dist/ true to the sources before an incremental build (tsc's `incremental`, build info in
// dist/.tsbuildinfo): outputs whose source was moved or deleted are removed, so no stale test is left behind; and
// when any source's output is missing (dist/ partly removed by hand), the build info is dropped, so tsc emits
// everything again instead of trusting it. `--clean` removes dist/ as a whole (a build from scratch).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const BUILD_INFO = path.join(DIST, '.tsbuildinfo');

if (process.argv.includes('--clean')) {
  rmSync(DIST, { recursive: true, force: true });
  process.exit(0);
}
if (!existsSync(DIST)) process.exit(0);

/** The source an output came from (`x.js`, `x.js.map`, `x.d.ts`, `x.d.ts.map` → `x.ts`), or undefined for other files. */
function sourceOf(output) {
  const m = /^(.*?)(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/.exec(output);
  return m === null ? undefined : `${m[1]}.ts`;
}

let removed = 0;
for (const entry of readdirSync(DIST, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const output = path.join(entry.parentPath ?? entry.path, entry.name);
  const relative = path.relative(DIST, output);
  const source = sourceOf(relative);
  if (source === undefined) continue;
  if (!existsSync(path.join(ROOT, source))) {
    rmSync(output);
    removed++;
  }
}

const { include } = JSON.parse((await import('node:fs')).readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));
const missing = include.some((dir) =>
  readdirSync(path.join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .some((f) => !existsSync(path.join(DIST, dir, f.replace(/\.ts$/, '.js')))),
);
if (missing) rmSync(BUILD_INFO, { force: true });
if (removed > 0 || missing) console.log(`prune-dist: ${removed} stale output(s) removed${missing ? '; outputs missing, full build' : ''}`);
