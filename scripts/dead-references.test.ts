/**
 * No dead references: every source path a code comment or a doc names, and every relative link of a doc, exists.
 *
 * Where it looks:
 * - code comments: the comments (`//`, `/* … *\/`, found by the TypeScript parser, so strings and regular
 *   expressions are not read) of every `.ts` file under cli/, lib/, proxy/, extproc/, apiserver-stub/, kit/,
 *   bench/, scripts/ and examples/, tests included;
 * - docs: the `.md` files at the root, every `.md` under docs/, and the README.md of each code folder (those
 *   above and deploy/); fenced blocks are skipped (their commands are checked by docs-commands.test.ts).
 *
 * What counts as a source path: the text of one backticked span (`proxy/chain/rerun.ts`) made only of letters, digits and
 * `_ . - @ /`, not starting with `/` or `@` (absolute paths and package names are not the repository's), that
 * ends in a file extension of the repository's sources (ts, js, mjs, md, json, yaml, yml, proto, sh, png) or in
 * `/`, or whose first segment is a top-level folder of the repository (`proxy/edge`). So `HTTP/1.1`,
 * `text/plain`, `ateapi.Control/ResumeActor` and `x-forwarded-*` are not paths, and a span with `*`, `<`, `{`,
 * `$` or `…` (a glob or a pattern) is skipped, as is a URL (`scheme:`).
 *
 * How a path is resolved:
 * - a path starting with `./` or `../` against the folder of the file that names it, and nothing else;
 * - `dist/proxy/main.js` as its source, `proxy/main.ts` (the build's output maps to the sources; `dist/` alone is skipped);
 * - a path whose first segment is a top-level folder (`proxy/chain/chain.ts`) against the repository root or the
 *   file's own folder;
 * - any other path (`chain.ts`, `edge/lifecycle.ts`, `actor-cache/`) names something that exists when some file
 *   or folder of the repository ends with it, on whole segments: a design page says `edge/lifecycle.ts` inside
 *   the proxy's section, a comment says `rerun.ts` beside it;
 * - what the product or the tests write at run time and git ignores (`certs/`, `reports/`, `bench/results/`) is
 *   not looked for;
 * - a path with a placeholder segment (`x.test.ts`, `src/NAME.ts`, a user's `my-filter/`) or `...` is not a
 *   reference; a `.js` path also names its `.ts` source (ESM imports name the built file).
 *
 * A markdown link `[text](target)` whose target is not a URL must name a file or folder relative to the doc's own
 * folder, and its `#fragment` a heading of that page (GitHub's anchors).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';

// Only what this test reads is loaded: the compiler as the CommonJS package it is (no ES-module export scan of its
// large file), and the root from this file's own place (dist/scripts/), not through the docs generator's imports.
const typescript = createRequire(import.meta.url)('typescript') as typeof ts;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The folders whose `.ts` comments are read. */
const CODE_FOLDERS = ['cli', 'lib', 'proxy', 'extproc', 'apiserver-stub', 'kit', 'bench', 'scripts', 'examples'];
/** Folders never walked: installed packages, the build, and what runs write. */
const NOT_SOURCES = new Set(['node_modules', 'dist', '.git', '.stryker-tmp']);
/** Paths the product or the tests write at run time (git ignores them). */
const RUN_TIME = ['certs', 'reports', 'bench/results', '.stryker-tmp'];
/** A file name with an extension (a name before its first dot: `.md` and `.test.js` alone are not paths). */
const EXTENSIONS = /(^|\/)[^/.][^/]*\.(ts|js|mjs|md|json|yaml|yml|proto|sh|png)$/;
/** A placeholder segment: the conventional `x` (`x.test.ts`), a `NAME` to fill in, or a user's own project (`my-filter/`). */
const PLACEHOLDER = /(^|\/)(x|NAME|my-[^/]*)(\.|\/|$)/;

/** Every file and folder of the repository, relative to the root, with `/` separators. */
function walk(dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    if (NOT_SOURCES.has(entry.name)) continue;
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    out.push(rel);
    if (entry.isDirectory()) out.push(...walk(rel));
  }
  return out;
}

const ALL = walk();
const TOP = new Set(ALL.filter((p) => !p.includes('/') && statSync(path.join(ROOT, p)).isDirectory()));
/** Every tail of every path, on whole segments (`lifecycle.ts`, `edge/lifecycle.ts`, `proxy/edge/lifecycle.ts`). */
const TAILS = new Set(ALL.flatMap((p) => p.split('/').map((_, i, parts) => parts.slice(i).join('/'))));

/** The text of `span` as a source path (without a trailing `/`), or undefined when it is not one. */
export function sourcePath(span: string): string | undefined {
  if (!/^[A-Za-z0-9_.@/-]+$/.test(span) || span.startsWith('/') || span.startsWith('@') || span.includes('...') || PLACEHOLDER.test(span)) return undefined;
  if (!span.includes('/') && !EXTENSIONS.test(span)) return undefined;
  const first = span.replace(/^(\.\.?\/)+/, '').split('/')[0] ?? '';
  if (!(EXTENSIONS.test(span) || span.endsWith('/') || TOP.has(first) || first === 'dist' || span.startsWith('.'))) return undefined;
  if (span === 'dist/' || span === './' || span === '../') return undefined;
  return span.replace(/\/$/, '');
}

/** Whether `p`, named in the file `from` (relative to the root), exists under the rules above. */
export function resolves(p: string, from: string): boolean {
  const own = path.posix.dirname(from);
  const bare = p.replace(/^\.\//, '');
  if (RUN_TIME.some((r) => bare === r || bare.startsWith(`${r}/`))) return true;
  if (p.startsWith('./') || p.startsWith('../')) return exists(path.join(own, p));
  if (p.startsWith('dist/')) {
    const source = p.slice('dist/'.length).replace(/\.js$/, '.ts');
    return exists(source) || exists(p.slice('dist/'.length));
  }
  if (TOP.has(p.split('/')[0] ?? '')) return exists(p) || exists(path.join(own, p));
  return TAILS.has(p) || (p.endsWith('.js') && TAILS.has(p.replace(/\.js$/, '.ts')));
}

/** Whether the repository has `rel`; a `.js` file also as its `.ts` source (an ESM import names the built file). */
function exists(rel: string): boolean {
  return existsSync(path.join(ROOT, rel)) || (rel.endsWith('.js') && existsSync(path.join(ROOT, rel.replace(/\.js$/, '.ts'))));
}

/** The backticked spans of `text` that are source paths and do not resolve from `file`. */
function deadPaths(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const p = sourcePath(m[1] as string);
    if (p !== undefined && !resolves(p, file)) out.push(m[1] as string);
  }
  return out;
}

/** Every comment of a TypeScript source, as the parser sees it (no string or regular expression is read). */
export function comments(text: string): string[] {
  const source = typescript.createSourceFile('x.ts', text, typescript.ScriptTarget.Latest, false);
  const found = new Map<number, string>();
  // Comments sit in the trivia between tokens, and every such run starts where a node or a list of nodes starts or
  // ends (a node's full start is the end of the token before it): reading the comments at those places finds them
  // all without making a node of every token. A comment after a token on its line is that token's trailing
  // comment; any other, the next token's leading one.
  const at = (pos: number): void => {
    for (const range of [...(typescript.getLeadingCommentRanges(text, pos) ?? []), ...(typescript.getTrailingCommentRanges(text, pos) ?? [])]) {
      found.set(range.pos, text.slice(range.pos, range.end));
    }
  };
  const visit = (node: ts.Node): void => {
    at(node.pos);
    at(node.end);
    typescript.forEachChild(node, visit, (nodes) => {
      at(nodes.pos);
      at(nodes.end);
      for (const n of nodes) visit(n);
    });
  };
  visit(source);
  return [...found].sort(([a], [b]) => a - b).map(([, comment]) => comment);
}

/** `text` without its fenced blocks. */
const prose = (text: string): string => text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1/gm, '');

/** The anchors GitHub makes for a page's headings (a repeated one gets -1, -2, …). */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (m[1] as string).trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    let name = slug;
    for (let n = 1; out.has(name); n++) name = `${slug}-${n}`;
    out.add(name);
  }
  return out;
}

/** The problems of one doc's relative links. */
function deadLinks(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
    const [target = '', fragment] = (m[1] as string).split('#');
    if (/^[a-z]+:/.test(target)) continue;
    const resolved = target === '' ? path.join(ROOT, file) : path.join(ROOT, path.dirname(file), target);
    if (!existsSync(resolved)) problems.push(`${file}: ${m[1]}: no such file`);
    else if (fragment !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(fragment)) problems.push(`${file}: ${m[1]}: no such heading`);
  }
  return problems;
}

const codeFiles = (): string[] => ALL.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts') && CODE_FOLDERS.includes(p.split('/')[0] ?? ''));
const docFiles = (): string[] =>
  ALL.filter((p) => p.endsWith('.md') && (!p.includes('/') || p.startsWith('docs/') || /^[^/]+\/README\.md$/.test(p))).sort();

test('every source path a code comment names exists', () => {
  const files = codeFiles();
  assert.ok(files.length > 500, `only ${files.length} .ts files found`);
  const dead = files.flatMap((file) =>
    comments(readFileSync(path.join(ROOT, file), 'utf8')).flatMap((c) => deadPaths(file, c).map((p) => `${file}: \`${p}\``)),
  );
  assert.deepEqual(dead, []);
});

test('every source path a doc names in its prose exists', () => {
  const files = docFiles();
  const dead = files.flatMap((file) => deadPaths(file, prose(readFileSync(path.join(ROOT, file), 'utf8'))).map((p) => `${file}: \`${p}\``));
  assert.deepEqual(dead, []);
  assert.ok(files.includes('DESIGN.md') && files.includes('docs/design/proxy.md') && files.includes('proxy/README.md'), files.join());
});

test('every relative link of a doc names a file that exists, and a heading in it', () => {
  assert.deepEqual(
    docFiles().flatMap((file) => deadLinks(file, readFileSync(path.join(ROOT, file), 'utf8'))),
    [],
  );
});

test('the rule: what is a path, how it resolves, and only comments are read', () => {
  for (const notPath of ['.md', '.test.js', 'x.test.ts', 'src/NAME.ts', 'dist/my-filter.js', 'proto/envoy/...', 'HTTP/1.1', 'text/plain', 'ateapi.Control/ResumeActor', 'x-forwarded-*', '/stats', '@grpc/grpc-js', 'https://x/y.md', 'proxy/*.ts', 'dist/', 'ip:port'])
    assert.equal(sourcePath(notPath), undefined, notPath);
  assert.equal(sourcePath('proxy/edge/'), 'proxy/edge');
  assert.equal(sourcePath('chain.ts'), 'chain.ts');
  assert.ok(resolves('proxy/chain/chain.ts', 'README.md'));
  assert.ok(resolves('edge/lifecycle.ts', 'docs/design/proxy.md'));
  assert.ok(resolves('rerun.ts', 'proxy/chain/chain.ts'));
  assert.ok(resolves('dist/proxy/main.js', 'docs/operating.md'));
  assert.ok(resolves('../DESIGN.md', 'docs/operating.md'));
  assert.ok(resolves('../proxy/api/public.js', 'docs/filters.md'));
  assert.ok(resolves('./certs', 'docs/deploying.md'));
  assert.ok(!resolves('./DESIGN.md', 'docs/operating.md'));
  assert.ok(!resolves('proxy/edge/no-such.ts', 'README.md'));
  assert.ok(!resolves('no-such-file.ts', 'proxy/main.ts'));
  assert.ok(!resolves('dist/proxy/no-such.js', 'README.md'));
  assert.deepEqual(comments("const a = '// `no-such.ts`'; /* `x.ts` */ const r = /`y.ts`/; // `z.ts`\n"), ['/* `x.ts` */', '// `z.ts`']);
  assert.deepEqual(comments('function f() {\n  g(/* a */);\n  // b\n}\nconst o = { k: 1, // c\n};\nconst t = `${1 /* d */}`; // e\n'), ['/* a */', '// b', '// c', '/* d */', '// e']);
});
