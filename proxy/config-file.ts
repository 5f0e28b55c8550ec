/**
 * The proxy's config file (`--config actor-edge.yaml`, or `.json`): any flag, by its flag name, plus the filter
 * list with per-filter options. Flags and environment variables override the file; the file overrides defaults.
 *
 *   listen: 127.0.0.1:8080
 *   actor-cache: on
 *   filter-timeout-ms: 2000
 *   filters:
 *     - module: ./filters/cors.js          # relative to this file's directory
 *       options: { origins: [https://app.example] }
 *     - ./filters/audit.js                 # a module without options
 *
 * Every field is checked when the file is read (at start, and on each reload); an error names the file and the
 * field. YAML is read with the `yaml` package (YAML 1.2: `on`/`off` are strings, as the flags spell them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readFlags, UsageError, type FlagSpecs } from '../lib/flags.js';
import { filterSpec, type FilterSpec } from './chain/load-filters.js';

export interface ConfigFile {
  readonly path: string;
  /** The file's flag values as environment variables (the layer readFlags reads below argv and the environment). */
  readonly env: Readonly<Record<string, string>>;
  /** The `filters` list; undefined when the file has none. */
  readonly filters: readonly FilterSpec[] | undefined;
}

/** Fields that cannot be set from the file. */
const NOT_IN_FILE: ReadonlySet<string> = new Set(['config', 'filter']);

/** Reads and checks `file` against `specs`. Throws UsageError naming the file and the field. */
export function readConfigFile(file: string, specs: FlagSpecs): ConfigFile {
  const where = `config file ${file}`;
  const doc = parseDocument(file, where);
  const env: Record<string, string> = {};
  const argv: string[] = [];
  let filters: FilterSpec[] | undefined;
  for (const [field, value] of Object.entries(doc)) {
    if (field === 'filters') {
      filters = readFilters(value, path.dirname(path.resolve(file)), where);
      continue;
    }
    const spec = specs[field];
    if (spec === undefined || NOT_IN_FILE.has(field)) {
      throw new UsageError(`${where}: unknown field "${field}"${field === 'filter' ? ' (the list is called "filters")' : ''}`);
    }
    if (spec.type === 'boolean') {
      const on = booleanOf(value, `${where}: ${field}`);
      argv.push(on ? `--${field}` : `--no-${field}`);
      env[spec.env] = on ? 'true' : 'false';
      continue;
    }
    const values = scalars(value, spec.type === 'list', `${where}: ${field}`);
    for (const v of values) argv.push(`--${field}=${v}`);
    env[spec.env] = values.join(',');
  }
  // The same checks as on the command line: an error names the field as a flag (`--cache-ttl-ms: ...`).
  try {
    readFlags(specs, argv, {});
  } catch (err) {
    throw new UsageError(`${where}: ${(err as Error).message}`);
  }
  return Object.freeze({ path: file, env: Object.freeze(env), filters: filters === undefined ? undefined : Object.freeze(filters) });
}

function parseDocument(file: string, where: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${where}: cannot read: ${(err as Error).message}`);
  }
  const ext = path.extname(file).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') throw new UsageError(`${where}: must end in .json, .yaml or .yml`);
  let doc: unknown;
  try {
    doc = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new UsageError(`${where}: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isMapping(doc)) throw new UsageError(`${where}: must be a mapping of field names to values`);
  return doc;
}

/** A field's value as flag text: one value, or (for a list flag) an array of them. */
function scalars(value: unknown, list: boolean, where: string): string[] {
  if (list && Array.isArray(value)) return value.map((v, i) => scalar(v, `${where}[${i}]`));
  return [scalar(value, where)];
}

function scalar(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  throw new UsageError(`${where}: expected a single string, number or boolean`);
}

function booleanOf(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (['on', 'true', 'yes', '1'].includes(text)) return true;
  if (['off', 'false', 'no', '0'].includes(text)) return false;
  throw new UsageError(`${where}: expected true or false`);
}

function readFilters(value: unknown, dir: string, where: string): FilterSpec[] {
  if (!Array.isArray(value)) throw new UsageError(`${where}: filters: expected a list of { module, options }`);
  return value.map((item, i) => {
    const at = `${where}: filters[${i}]`;
    if (typeof item === 'string') return filterSpec(resolveModule(item, dir, at));
    if (!isMapping(item)) throw new UsageError(`${at}: expected a module path or { module, options }`);
    for (const key of Object.keys(item)) if (key !== 'module' && key !== 'options') throw new UsageError(`${at}: unknown field "${key}"`);
    const { module, options } = item;
    if (typeof module !== 'string') throw new UsageError(`${at}.module: expected a module path`);
    if (options !== undefined && !isMapping(options)) throw new UsageError(`${at}.options: expected a mapping`);
    return filterSpec(resolveModule(module, dir, `${at}.module`), deepFreeze(options ?? {}));
  });
}

function resolveModule(module: string, dir: string, where: string): string {
  if (module.trim() === '') throw new UsageError(`${where}: empty module path`);
  return module.startsWith('file:') ? module : path.resolve(dir, module);
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}
