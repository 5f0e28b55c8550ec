/**
 * `npm run docs`: regenerates what is made from the flag declarations — the README's flag tables (between each
 * component's `<!-- flags:NAME -->` markers) and the config files' JSON Schemas in schema/ (published with the
 * package). `scripts/docs.test.ts` fails when either is out of date.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { replaceFlagTables } from '../lib/flag-docs.js';
import { configSchema } from '../lib/flag-schema.js';
import { FLAG_SETS } from './flag-sets.js';

/** The repository root (this file is dist/scripts/docs.js). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const README = path.join(ROOT, 'README.md');
export const schemaFile = (command: string): string => path.join(ROOT, 'schema', `${command}.schema.json`);

export function generatedReadme(readme: string): string {
  return FLAG_SETS.reduce((text, set) => replaceFlagTables(text, set), readme);
}

export function schemaText(command: string): string {
  const set = FLAG_SETS.find((s) => s.command === command);
  if (set === undefined) throw new Error(`no flag set "${command}"`);
  return JSON.stringify(configSchema(set), null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README, generatedReadme(readFileSync(README, 'utf8')));
  mkdirSync(path.join(ROOT, 'schema'), { recursive: true });
  for (const set of FLAG_SETS) writeFileSync(schemaFile(set.command), schemaText(set.command));
  process.stdout.write(`docs: README flag tables and schema/ for ${FLAG_SETS.map((s) => s.command).join(', ')}\n`);
}
