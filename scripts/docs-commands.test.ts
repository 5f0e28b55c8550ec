/**
 * The commands the docs show exist: every command in a fenced `sh` block of README.md and docs/ names only
 * scripts, flags, variables and files that are there.
 * - `npm run X` → X is a script in package.json; `npm start -- --flag` → a flag of the launcher
 *   (scripts/stack/flags.ts), `npm run fleet -- --flag` → one of the fleet's (scripts/fleet/flags.ts);
 * - `actor-edge CMD --flag` (also `node dist/cli/main.js`, `npx actor-edge`) → CMD is a component (or a command of
 *   two words such as `certs actor`), `validate` or `new-filter`, and the flag one it declares (FLAG_SETS in
 *   scripts/flag-sets.ts);
 * - `NAME=value` before a command → a variable some component, the launcher, the fleet, compose.yaml or an
 *   example filter reads;
 * - a relative path into the repository (`examples/…`, `deploy/…`, `dist/examples/cors.js` for examples/cors.ts) → it
 *   exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { FlagSpec } from '../lib/flags.js';
import { COMPONENTS } from '../cli/components.js';
import { NEW_FILTER_OPTIONS } from '../cli/new-filter.js';
import { FLAG_SETS } from './flag-sets.js';
import { STACK_FLAGS } from './stack/flags.js';
import { FLEET_FLAGS } from './fleet/flags.js';
import { ROOT } from './docs.js';

/** README.md and every page under docs/. */
function pages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f).split(path.sep).join('/'));
  return ['README.md', ...docs.sort()];
}

/** The fenced blocks of `text` whose info string is `sh`, each with the line it starts on. */
export function shellBlocks(text: string): { line: number; body: string }[] {
  const out: { line: number; body: string }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)/.exec(lines[i] ?? '');
    if (open === null) continue;
    const fence = open[1] as string;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').startsWith(fence); i++) body.push(lines[i] ?? '');
    if (open[2] === 'sh') out.push({ line: start + 1, body: body.join('\n') });
  }
  return out;
}

/** Shell words of one command line: quotes removed, comments dropped; `&&`, `||`, `;`, `|`, `&` split commands. */
export function commands(body: string): string[][] {
  const out: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  const text = body.replace(/\\\n/g, ' ');
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) out.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      word += text.slice(i + 1, close < 0 ? text.length : close);
      inWord = true;
      i = close < 0 ? text.length : close;
    } else if (c === '#' && !inWord) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl - 1;
    } else if (c === '\n' || c === ';' || c === '|' || c === '&') {
      endCommand();
      if (text[i + 1] === c) i++;
    } else if (c === ')' || (c === '(' && !inWord)) {
      endCommand();
    } else if (c === ' ' || c === '\t') endWord();
    else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return out;
}

const flagNames = (specs: Readonly<Record<string, unknown>>): Set<string> => new Set([...Object.keys(specs), 'help']);

/** Every environment variable something declares it reads (names ending in `*`: a prefix). */
function declaredVariables(): string[] {
  const names = new Set<string>();
  const add = (spec: FlagSpec | { env?: string; envAliases?: readonly string[] }): void => {
    if (spec.env !== undefined) names.add(spec.env);
    for (const alias of spec.envAliases ?? []) names.add(alias);
  };
  for (const set of FLAG_SETS) {
    Object.values(set.flags).forEach(add);
    for (const name of Object.keys(set.variables ?? {})) names.add(name);
  }
  Object.values(STACK_FLAGS).forEach(add);
  Object.values(FLEET_FLAGS).forEach(add);
  for (const m of readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z0-9_]+)/g)) names.add(m[1] as string);
  for (const file of readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    for (const m of readFileSync(path.join(ROOT, 'examples', file), 'utf8').matchAll(/process\.env\.([A-Z0-9_]+)/g)) names.add(m[1] as string);
  }
  return [...names];
}

const SCRIPTS = Object.keys((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
const VARIABLES = declaredVariables();
/** The repository's own top-level folders: a path starting with one of them must exist. */
const TOP = new Set(
  readdirSync(ROOT).filter((f) => !f.startsWith('.') && !['node_modules', 'dist', 'certs'].includes(f) && statSync(path.join(ROOT, f)).isDirectory()),
);

function variableKnown(name: string): boolean {
  return VARIABLES.some((v) => (v.endsWith('*') ? name.startsWith(v.slice(0, -1)) : v === name));
}

/** The flags `words` (after a command) use: `--name` and `--name=value`, up to a lone `--`. */
function flagsIn(words: readonly string[]): string[] {
  return words.filter((w) => /^--[a-z0-9]/.test(w)).map((w) => w.slice(2).split('=')[0] as string);
}

/** A path in the repository `word` names, or undefined (dist/x.js is checked as its source, x.ts). */
function repoPath(word: string): string | undefined {
  const value = word.includes('=') && !word.startsWith('.') && !word.startsWith('/') ? word.slice(word.indexOf('=') + 1) : word;
  if (value.includes('$') || value.includes('*') || value.includes('…')) return undefined;
  const rel = value.replace(/^\.\//, '');
  const isDist = rel.startsWith('dist/');
  const inRepo = isDist ? rel.slice('dist/'.length) : rel;
  if (!TOP.has(inRepo.split('/')[0] ?? '') || !inRepo.includes('/')) return undefined;
  return isDist ? inRepo.replace(/\.js$/, '.ts') : inRepo;
}

/** What is wrong with one command (empty: nothing). */
export function problemsOf(words: readonly string[]): string[] {
  const problems: string[] = [];
  let i = 0;
  for (; i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string); i++) {
    const name = (words[i] as string).split('=')[0] as string;
    if (!variableKnown(name)) problems.push(`${name}: no component, launcher, compose file or example reads this variable`);
  }
  const cmd = words.slice(i);
  for (const word of cmd) {
    const p = repoPath(word);
    if (p !== undefined && !existsSync(path.join(ROOT, p))) problems.push(`${word}: ${p} does not exist`);
  }
  const [first, second, third] = cmd;
  if (first === 'npm' && second === 'run') {
    if (third === undefined || !SCRIPTS.includes(third)) problems.push(`npm run ${third ?? ''}: no such script in package.json`);
    else if (third === 'fleet') for (const f of flagsIn(cmd.slice(3))) if (!flagNames(FLEET_FLAGS).has(f)) problems.push(`npm run fleet -- --${f}: not a flag of the fleet`);
  }
  if (first === 'npm' && second === 'start') {
    for (const f of flagsIn(cmd.slice(2))) if (!flagNames(STACK_FLAGS).has(f)) problems.push(`npm start -- --${f}: not a flag of the launcher`);
  }
  const cli = first === 'actor-edge' ? 0 : first === 'npx' && second === 'actor-edge' ? 1 : first === 'node' && /(^|\/)dist\/cli\/main\.js$/.test(second ?? '') ? 1 : -1;
  if (cli >= 0) {
    const sub = cmd[cli + 1];
    const rest = cmd.slice(cli + 2);
    if (sub === undefined || sub === '--version' || sub === '--help') return problems;
    if (sub === 'new-filter') {
      for (const f of flagsIn(rest)) if (!flagNames(NEW_FILTER_OPTIONS).has(f)) problems.push(`actor-edge new-filter --${f}: not a flag of new-filter`);
      return problems;
    }
    const validate = sub === 'validate';
    const component = validate ? (rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : 'proxy') : sub;
    // A command of two words (`certs actor`) when the word after the component is its second.
    const twoWords = validate ? undefined : FLAG_SETS.find((s) => s.command === `${component} ${rest[0] ?? ''}`);
    const set = twoWords ?? FLAG_SETS.find((s) => s.command === component);
    if (!(component in COMPONENTS) || set === undefined) {
      problems.push(`actor-edge ${validate ? `validate ${component}` : component}: no such command`);
      return problems;
    }
    for (const f of flagsIn(rest)) if (!flagNames(set.flags).has(f) && f !== 'version') problems.push(`actor-edge ${set.command} --${f}: not a flag of ${set.command}`);
  }
  return problems;
}

/** Every problem of every `sh` block of `text`, as `file:line: …`. */
export function pageProblems(file: string, text: string): string[] {
  return shellBlocks(text).flatMap(({ line, body }) => commands(body).flatMap((words) => problemsOf(words).map((p) => `${file}:${line}: ${p}`)));
}

test('every command in a sh block of README.md and docs/ names scripts, flags, variables and files that exist', () => {
  const texts = pages().map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
  const checked = texts.flatMap(({ text }) => shellBlocks(text).flatMap(({ body }) => commands(body)));
  assert.ok(checked.length >= 50, `only ${checked.length} commands found in sh blocks`);
  assert.deepEqual(
    texts.flatMap(({ file, text }) => pageProblems(file, text)),
    [],
  );
});

test('the check finds a made-up script, flag, command, variable or path', () => {
  const block = (body: string): string[] => pageProblems('x.md', `\`\`\`sh\n${body}\n\`\`\`\n`);
  assert.equal(block('npm start -- --filter a.js --tls off\nnpm run fleet -- --replicas 5').length, 0);
  assert.match(block('npm start -- --made-up-flag').join(), /--made-up-flag: not a flag of the launcher/);
  assert.match(block('npm run no-such-script').join(), /no such script/);
  assert.match(block('actor-edge proxy --listen 127.0.0.1:0 --made-up 1').join(), /actor-edge proxy --made-up: not a flag of proxy/);
  assert.match(block('node dist/cli/main.js extproc --cache-ttl-ms 5').join(), /not a flag of extproc/);
  assert.match(block('actor-edge no-such-command').join(), /no such command/);
  assert.match(block('actor-edge validate extproc --config f.yaml --filter a.js').join(), /not a flag of extproc/);
  assert.match(block('actor-edge new-filter x --made-up').join(), /not a flag of new-filter/);
  assert.equal(block('actor-edge certs actor --ca-dir certs --atespace a --name n --out a.pem').length, 0);
  assert.match(block('actor-edge certs actor --ca-dir certs --days 3').join(), /actor-edge certs actor --days: not a flag of certs actor/);
  assert.match(block('actor-edge certs --atespace a').join(), /actor-edge certs --atespace: not a flag of certs/);
  assert.match(block('PROXY_MADE_UP=1 npm start').join(), /PROXY_MADE_UP: no component/);
  assert.equal(block('PROXY_ACTOR_CACHE=off OTEL_TRACES_EXPORTER=otlp npm start').length, 0);
  assert.match(block('actor-edge proxy --config examples/config/no-such.yaml').join(), /does not exist/);
  assert.match(block('(cd x && actor-edge proxy --filter ./dist/examples/no-such.js)').join(), /examples\/no-such\.ts does not exist/);
  assert.equal(block("curl -s -H 'Host: a.b.c' http://127.0.0.1:8080/   # --not-a-flag in a comment").length, 0);
});
