/**
 * docs/reference/config-schema.md: the config files' fields, one table per component and section, read from the
 * JSON Schemas the flag declarations generate (`lib/flag-schema.ts`, written to schema/ by `npm run docs`).
 */
import { configSchema } from '../../lib/flag-schema.js';
import { CONFIG_FILE_SETS } from '../flag-sets.js';
import { cell, code, generatedNote, page, table } from './markdown.js';

interface Schema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly items?: Schema;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly required?: readonly string[];
}

/** What a value may be, in a few words. */
function typeText(s: Schema): string {
  const alternatives = s.oneOf ?? s.anyOf;
  if (alternatives !== undefined) return alternatives.map(typeText).join(' or ');
  if (s.enum !== undefined) return s.enum.map((v) => JSON.stringify(v)).join(', ');
  if (s.type === 'array') return `list of ${s.items === undefined ? 'values' : typeText(s.items)}`;
  if (s.properties !== undefined) {
    const fields = Object.keys(s.properties).map((k) => (s.required?.includes(k) ? k : `${k}?`));
    const types = [s.type ?? 'object'].flat().filter((t) => t !== 'object');
    return [...types, `{ ${fields.join(', ')} }`].join(' or ');
  }
  const base = [s.type ?? 'any'].flat().join(' or ');
  const range = [s.minimum === undefined ? '' : `≥ ${s.minimum}`, s.maximum === undefined ? '' : `≤ ${s.maximum}`].filter((r) => r !== '').join(', ');
  return range === '' ? base : `${base} (${range})`;
}

function defaultText(s: Schema): string {
  return s.default === undefined ? '' : code(JSON.stringify(s.default));
}

/** One row per field under `s` (objects with fields of their own are walked), keys as dotted paths. */
function rows(s: Schema, prefix: string): string[][] {
  const out: string[][] = [];
  for (const [key, field] of Object.entries(s.properties ?? {})) {
    if (key === '$schema') continue;
    const path = `${prefix}${key}`;
    const nested = field.type === 'object' && field.properties !== undefined && Object.values(field.properties).some((f) => f.description !== undefined);
    if (nested) out.push(...rows(field, `${path}.`));
    else out.push([code(path), cell(typeText(field)), defaultText(field), cell(field.description ?? '')]);
  }
  return out;
}

export function configSchemaPage(): string {
  const lines: string[] = [
    '# Config file schema',
    '',
    generatedNote('the flag declarations (the JSON Schemas in schema/)'),
    '',
    'Every component reads a config file with `--config FILE` (YAML or JSON): a tree of sections, each setting at',
    'the key shown here. Flags and environment variables override the file. The same schemas are in `schema/`',
    '(shipped with the package): add `# yaml-language-server: $schema=./schema/proxy.schema.json` as the first line',
    'of a file for completion in an editor. `actor-edge validate --config FILE` checks a file against them. Each',
    "field's flag and environment variable are in parentheses; [flags.md](flags.md) has the same settings by flag.",
    '',
  ];
  for (const set of CONFIG_FILE_SETS) {
    const schema = configSchema(set) as Schema;
    lines.push(`## ${set.command}`, '', `${schema.description ?? ''} File: \`schema/${set.command}.schema.json\`.`, '');
    const top = Object.entries(schema.properties ?? {}).filter(([key]) => key !== '$schema');
    const general = top.filter(([, s]) => s.properties === undefined || s.type !== 'object');
    if (general.length > 0) lines.push(...table(['key', 'type', 'default', 'meaning'], rows({ properties: Object.fromEntries(general) }, '')), '');
    for (const [section, s] of top) {
      if (s.properties === undefined || s.type !== 'object') continue;
      lines.push(`**${section}**: ${cell(s.description ?? '')}`, '', ...table(['key', 'type', 'default', 'meaning'], rows(s, `${section}.`)), '');
    }
  }
  return page(lines);
}
