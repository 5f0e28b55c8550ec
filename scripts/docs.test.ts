/**
 * The generated docs: the flag tables of docs/reference/flags.md and schema/ are what the declarations generate,
 * and each component's `--help` lists the same flags, variables, keys, defaults and meanings; the other reference
 * pages (config schema, metrics, admin API, errors) are what `npm run docs` writes now.
 * Needs processes: `actor-edge <component> --help` is the CLI's output, read from the process as an operator sees it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI_SCRIPT } from '../cli/launch-component.js';
import { MARKER } from '../lib/flag-docs.js';
import { runScript } from '../lib/testing/run-script.js';
import { CONFIG_FILE_SETS, FLAG_SETS } from './flag-sets.js';
import { FLAGS_PAGE, GENERATED_PAGES, generatedFlagTables, ROOT, schemaFile, schemaText } from './docs.js';

interface Entry {
  readonly env: string;
  readonly key: string;
  readonly default: string;
  readonly help: string;
}

/** `--help` as printed by the real process: flag → its variable, file key, default and help. */
function fromHelp(text: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const m = /^ {2}--([a-z0-9-]+)(?: N| VALUE(?: \(repeatable\))?)? {4}\[([A-Z0-9_]+)(?: \(formerly [^)]*\))?(?:; ([^\]]+))?\]$/.exec(line);
    if (m === null) return;
    const body = (lines[i + 1] ?? '').trim();
    const d = /^(.*?)(?: \((?:[^;()]+; )?default ([^()]*)\))?$/.exec(body);
    out.set(m[1] ?? '', { env: m[2] ?? '', key: m[3] ?? '—', default: d?.[2] ?? 'none', help: d?.[1] ?? body });
  });
  return out;
}

const unquote = (cell: string): string => cell.trim().replace(/^`|`$/g, '').replace(/\\\|/g, '|');

/** The flag reference's generated tables for one component: flag → the same fields. */
function fromTables(text: string, command: string): Map<string, Entry> {
  const { open, close } = MARKER(command);
  const block = text.slice(text.indexOf(open), text.indexOf(close));
  assert.ok(block.length > open.length, `docs/reference/flags.md has a flag table for ${command}`);
  const out = new Map<string, Entry>();
  for (const line of block.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1);
    const m = /^`--([a-z0-9-]+)/.exec(cells[0]?.trim() ?? '');
    if (m === null || cells.length !== 5 || cells[1]?.trim() === '') continue;
    const env = /`([A-Z0-9_]+)`/.exec(cells[1] ?? '')?.[1] ?? '';
    const key = unquote(cells[2] ?? '');
    out.set(m[1] ?? '', { env, key, default: unquote(cells[3] ?? ''), help: (cells[4] ?? '').trim().replace(/\\\|/g, '|') });
  }
  return out;
}

test('the flag tables of docs/reference/flags.md are the ones the declarations generate (run `npm run docs` after changing a flag)', () => {
  const text = readFileSync(FLAGS_PAGE, 'utf8');
  assert.equal(text, generatedFlagTables(text));
});

test('docs/reference/ holds the pages the code generates: config schema, metrics, admin API, errors (run `npm run docs`)', async () => {
  for (const p of GENERATED_PAGES) {
    const name = path.relative(ROOT, p.file);
    assert.equal(readFileSync(p.file, 'utf8'), await p.generate(), `${name} is out of date: run \`npm run docs\``);
  }
});

test('schema/ holds the JSON Schemas the declarations generate (run `npm run docs` after changing a flag)', () => {
  for (const set of CONFIG_FILE_SETS) assert.equal(readFileSync(schemaFile(set.command), 'utf8'), schemaText(set.command), set.command);
});

test('for every component, the flag reference and --help list the same flags, variables, keys, defaults and meanings', async () => {
  const reference = readFileSync(FLAGS_PAGE, 'utf8');
  for (const set of FLAG_SETS) {
    const run = await runScript(CLI_SCRIPT, [...set.command.split(' '), '--help']);
    assert.equal(run.code, 0, run.stderr);
    const help = fromHelp(run.stdout);
    const table = fromTables(reference, set.command);
    assert.deepEqual([...table.keys()].sort(), [...help.keys()].sort(), `${set.command}: the same flags`);
    assert.deepEqual([...help.keys()].sort(), Object.keys(set.flags).sort(), `${set.command}: --help lists every declared flag`);
    for (const [flag, entry] of help) assert.deepEqual(table.get(flag), entry, `${set.command} --${flag}`);
  }
});

test('every component that loads certificates declares --cert-expiry-warning-hours alike (one declaration in lib/tls/expiry.ts)', () => {
  const expected: Record<string, readonly [string, string | undefined]> = {
    proxy: ['PROXY_CERT_EXPIRY_WARNING_HOURS', 'ops'],
    extproc: ['EXTPROC_CERT_EXPIRY_WARNING_HOURS', 'admin'],
    'apiserver-stub': ['APISERVER_CERT_EXPIRY_WARNING_HOURS', 'admin'],
    worker: ['WORKER_CERT_EXPIRY_WARNING_HOURS', undefined],
  };
  for (const set of FLAG_SETS) {
    const spec = set.flags['cert-expiry-warning-hours'];
    const want = expected[set.command];
    if (want === undefined) {
      assert.equal(spec, undefined, `${set.command} loads no certificate to watch`);
      continue;
    }
    assert.ok(spec !== undefined && spec.type === 'number', `${set.command}: a number flag`);
    assert.equal(spec.default, 168, set.command);
    assert.equal(spec.min, 0, set.command);
    assert.equal(spec.env, want[0]);
    assert.equal(spec.section, want[1], set.command);
    assert.match(spec.help, /^Log a warning while a certificate .+ expires within this many hours \(0: never\)\.$/, set.command);
  }
});
