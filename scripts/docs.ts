/**
 * `npm run docs`: regenerates what is made from the code.
 * - docs/reference/flags.md: each component's flag tables, between its `<!-- flags:NAME -->` markers, from the flag
 *   declarations (the prose around them is written by hand);
 * - schema/: the config files' JSON Schemas (published with the package), from the same declarations;
 * - docs/reference/config-schema.md, metrics.md, admin-api.md and errors.md, whole, from the schemas, the metric
 *   registries, the admin routes and the error catalogs (`scripts/reference/`).
 * `scripts/docs.test.ts` fails when any of them is out of date.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { replaceFlagTables } from '../lib/flag-docs.js';
import { configSchema } from '../lib/flag-schema.js';
import { CONFIG_FILE_SETS, FLAG_SETS } from './flag-sets.js';
import { configSchemaPage } from './reference/config-schema.js';
import { metricsPage } from './reference/metrics.js';
import { adminApiPage } from './reference/admin-api.js';
import { errorsPage } from './reference/errors.js';

/** The repository root (this file is dist/scripts/docs.js). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const REFERENCE = path.join(ROOT, 'docs', 'reference');
/** The flag reference: hand-written prose, generated tables between markers. */
export const FLAGS_PAGE = path.join(REFERENCE, 'flags.md');
export const schemaFile = (command: string): string => path.join(ROOT, 'schema', `${command}.schema.json`);

/** `text` (the flag reference) with every component's tables generated again. */
export function generatedFlagTables(text: string): string {
  return FLAG_SETS.reduce((out, set) => replaceFlagTables(out, set), text);
}

export function schemaText(command: string): string {
  const set = CONFIG_FILE_SETS.find((s) => s.command === command);
  if (set === undefined) throw new Error(`no flag set "${command}"`);
  return JSON.stringify(configSchema(set), null, 2) + '\n';
}

/** The pages generated whole: file → its text. */
export const GENERATED_PAGES: readonly { readonly file: string; generate(): string | Promise<string> }[] = [
  { file: path.join(REFERENCE, 'config-schema.md'), generate: configSchemaPage },
  { file: path.join(REFERENCE, 'metrics.md'), generate: metricsPage },
  { file: path.join(REFERENCE, 'admin-api.md'), generate: adminApiPage },
  { file: path.join(REFERENCE, 'errors.md'), generate: errorsPage },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(FLAGS_PAGE, generatedFlagTables(readFileSync(FLAGS_PAGE, 'utf8')));
  mkdirSync(path.join(ROOT, 'schema'), { recursive: true });
  for (const set of CONFIG_FILE_SETS) writeFileSync(schemaFile(set.command), schemaText(set.command));
  mkdirSync(REFERENCE, { recursive: true });
  for (const p of GENERATED_PAGES) writeFileSync(p.file, await p.generate());
  const pages = ['flags.md', ...GENERATED_PAGES.map((p) => path.basename(p.file))];
  process.stdout.write(`docs: docs/reference/ (${pages.join(', ')}) and schema/ for ${CONFIG_FILE_SETS.map((s) => s.command).join(', ')}\n`);
}
