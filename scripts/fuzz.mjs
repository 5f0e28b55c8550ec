// Runs the property-based fuzz suite (dist/**/*.fuzz.test.js, compiled) longer than `npm test` does:
//   npm run fuzz -- --runs N     cases per property (FUZZ_RUNS; npm test runs each file's short default)
//                   --seed S     the seed (FUZZ_SEED); without it a new one is drawn and printed first
//                   --path P     replays one counterexample (FUZZ_PATH, with the seed it was found with)
//                   --only NAME  only the fuzz files whose path contains NAME (e.g. worker-answers)
// A failure prints the seed, the path and the shrunk case, and the command that replays it.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { randomInt } from 'node:crypto';
import path from 'node:path';

const args = process.argv.slice(2);
const options = {};
for (let i = 0; i < args.length; i += 2) {
  const name = args[i];
  const value = args[i + 1];
  if (!['--runs', '--seed', '--path', '--only'].includes(name) || value === undefined) {
    console.error(`fuzz: unknown or incomplete option ${name ?? ''} (use --runs N, --seed S, --path P, --only NAME)`);
    process.exit(2);
  }
  options[name.slice(2)] = value;
}
for (const key of ['runs', 'seed']) {
  if (options[key] !== undefined && !/^-?\d+$/.test(options[key])) {
    console.error(`fuzz: --${key} ${options[key]} is not an integer`);
    process.exit(2);
  }
}

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const files = readdirSync(dist, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.fuzz.test.js') && (options.only === undefined || f.includes(options.only)))
  .map((f) => path.join('dist', f));
if (files.length === 0) {
  console.error('fuzz: no fuzz test files under dist/ (run tsc first, or check --only)');
  process.exit(1);
}

const seed = options.seed ?? String(randomInt(2 ** 31));
const env = { ...process.env, FUZZ_SEED: seed };
if (options.runs !== undefined) env.FUZZ_RUNS = options.runs;
if (options.path !== undefined) env.FUZZ_PATH = options.path;
console.log(`fuzz: seed ${seed}, ${options.runs ?? 'the default number of'} case(s) per property, ${files.length} file(s)`);
// Two files at a time (each runs a whole proxy path in its own process); no per-test timeout (a long run is long);
// a file whose run left something open (a finding of its own, reported by its end-of-run check) must still exit.
const [major, minor] = process.versions.node.split('.').map(Number);
const forceExit = major >= 22 || (major === 20 && minor >= 14) ? ['--test-force-exit'] : [];
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...forceExit, ...files], { stdio: 'inherit', env });
console.log(`fuzz: seed ${seed} ${run.status === 0 ? 'passed' : 'failed'}`);
process.exit(run.status ?? 1);
