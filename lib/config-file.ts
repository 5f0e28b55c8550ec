/**
 * A component's config file (`--config actor-edge.yaml`, or `.json`): the flags' settings as a tree of sections,
 * each flag at its file key (`cache: { ttlMs: 5000 }`), plus any config-file-only fields the component declares.
 *
 *   # yaml-language-server: $schema=../../schema/proxy.schema.json
 *   listeners:
 *     http: 127.0.0.1:8080
 *   cache:
 *     ttlMs: 2000
 *
 * The file is checked against the JSON Schema generated from the same declarations (`flag-schema.ts`, with ajv);
 * an error names the file, the field and the reason. The older flat form (flag names at the top level,
 * `cache-ttl-ms: 2000`) is still read, each such key with a deprecation warning naming its nested key. A secret
 * may be given as `{ file: PATH }` (relative to the config file), read only when no flag or variable overrides it.
 * YAML is read with the `yaml` package (YAML 1.2: `on`/`off` are strings, as the flags spell them).
 * Both packages are loaded on the first file read: a component started without `--config` never loads them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { fileKey, UsageError, type FileLayer, type FlagSet, type FlagSpec } from './flags.js';
import { configSchema } from './flag-schema.js';

export interface ConfigFileRead {
  readonly path: string;
  /** The flags' values from the file (the layer below argv and the environment). */
  readonly layer: FileLayer;
  /** The config-file-only fields the file sets (dotted path → checked, frozen value). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Deprecated forms the file uses, each naming its replacement. */
  readonly warnings: readonly string[];
}

/** The `--config` flag every component with a config file declares (under its own environment variable). */
export function configFlag(env: string, command: string) {
  return {
    type: 'string?',
    env,
    noFile: true,
    help: `A config file (.yaml, .yml or .json) with these settings in sections (schema/${command}.schema.json); flags and environment variables override it.`,
  } as const;
}

const validators = new WeakMap<FlagSet, ValidateFunction>();

/** `require`, for the two packages loaded only when a file is read (both are CommonJS; reading a file is synchronous). */
const load = createRequire(import.meta.url);

function validatorOf(set: FlagSet): ValidateFunction {
  let validate = validators.get(set);
  if (validate === undefined) {
    const { Ajv } = load('ajv') as typeof import('ajv');
    validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(configSchema(set));
    validators.set(set, validate);
  }
  return validate;
}

/** Reads and checks `file` against the flag set. Throws UsageError naming the file and the field. */
export function readConfigFile(file: string, set: FlagSet): ConfigFileRead {
  const where = `config file ${file}`;
  const warnings: string[] = [];
  const writtenAs = new Map<string, string>();
  const doc = liftFlatKeys(parseDocument(file, where), set, where, warnings, writtenAs);
  const validate = validatorOf(set);
  if (!validate(doc)) throw new UsageError(`${where}: ${describeErrors(validate.errors ?? [], set, writtenAs)}`);
  const dir = path.dirname(path.resolve(file));
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const [name, spec] of Object.entries(set.flags)) {
    const key = fileKey(name, spec);
    const value = key === undefined ? undefined : at(doc, key);
    if (key === undefined || value === undefined) continue;
    values[name] = fileValue(spec, value);
    sources[name] = `${where}: ${label(key, writtenAs)}`;
  }
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(set.fileFields ?? {})) {
    const value = at(doc, key);
    if (value !== undefined) fields[key] = deepFreeze(value);
  }
  const resolve = (name: string, value: unknown): unknown => (isSecretFile(value) ? readSecret(value.file, dir, sources[name] ?? where) : value);
  return Object.freeze({
    path: file,
    layer: Object.freeze({ values: Object.freeze(values), sources: Object.freeze(sources), resolve }),
    fields: Object.freeze(fields),
    warnings: Object.freeze(warnings),
  });
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
    doc = ext === '.json' ? JSON.parse(text) : (load('yaml') as typeof import('yaml')).parse(text);
  } catch (err) {
    throw new UsageError(`${where}: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isMapping(doc)) throw new UsageError(`${where}: must be a mapping of sections to settings`);
  return doc;
}

/**
 * Flat (flag-named) top-level keys → their nested place, each with a deprecation warning; `writtenAs` records
 * nested key → the flat key, so errors name the key as the file spells it.
 */
function liftFlatKeys(doc: Record<string, unknown>, set: FlagSet, where: string, warnings: string[], writtenAs: Map<string, string>): Record<string, unknown> {
  const flat = new Map<string, string>();
  for (const [name, spec] of Object.entries(set.flags)) {
    const key = fileKey(name, spec);
    if (key !== undefined && key !== name) flat.set(name, key);
  }
  for (const [key, field] of Object.entries(set.fileFields ?? {})) if (field.flat !== undefined) flat.set(field.flat, key);
  const out: Record<string, unknown> = {};
  const lifted: [string, string, unknown][] = [];
  for (const [key, value] of Object.entries(doc)) {
    const nested = flat.get(key);
    // A flag named like a section (`admin: HOST:PORT` beside `admin: { listen }`) is flat when it is no mapping.
    if (nested === undefined || (key in set.sections && isMapping(value))) out[key] = value;
    else lifted.push([key, nested, value]);
  }
  for (const [key, nested, value] of lifted) {
    warnings.push(`${where}: "${key}" at the top level is deprecated: use ${nested}`);
    writtenAs.set(nested, key);
    const [head = '', ...rest] = nested.split('.');
    if (rest.length === 0) {
      if (head in out) throw new UsageError(`${where}: both "${key}" and ${nested} are set`);
      out[head] = value;
      continue;
    }
    const section = out[head] ?? {};
    if (!isMapping(section)) continue; // the schema reports the section's type
    if (rest.join('.') in section) throw new UsageError(`${where}: both "${key}" and ${nested} are set`);
    out[head] = { ...section, [rest.join('.')]: value };
  }
  return out;
}

function at(doc: Record<string, unknown>, key: string): unknown {
  const [head = '', ...rest] = key.split('.');
  if (rest.length === 0) return doc[head];
  const section = doc[head];
  return isMapping(section) ? section[rest.join('.')] : undefined;
}

/** A value the schema accepted, as readFlags holds it. */
function fileValue(spec: FlagSpec, value: unknown): unknown {
  if (spec.type === 'choice' && typeof value === 'boolean') return value ? 'on' : 'off';
  if (spec.type === 'list') return Object.freeze([...(value as string[])]);
  return value;
}

function isSecretFile(v: unknown): v is { file: string } {
  return isMapping(v) && typeof v.file === 'string';
}

function readSecret(file: string, dir: string, where: string): string {
  const full = path.resolve(dir, file);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `${where}: file not found: ${full}` : `${where}: cannot read the file ${full}: ${code ?? (err as Error).message}`);
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new UsageError(`${where}: the file ${full} is empty`);
  return value;
}

/** A field as the file spells it: under a lifted flat key it is named as written, then by its nested path. */
function label(field: string, writtenAs: ReadonlyMap<string, string>, quote = false): string {
  const q = (s: string): string => (quote ? `"${s}"` : s);
  for (const [nested, flat] of writtenAs) {
    if (field === nested || field.startsWith(`${nested}[`) || field.startsWith(`${nested}.`)) return `${q(flat + field.slice(nested.length))} (${field})`;
  }
  return q(field);
}

/** A field path from ajv's instance path (`/cache/ttlMs` → `cache.ttlMs`, `/chain/filters/0` → `chain.filters[0]`). */
function fieldOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc === '' ? p : `${acc}.${p}`), '');
}

/** Known keys like `key` at the same level: same letters ignoring case, dashes and underscores. */
function suggestion(parent: string, key: string, set: FlagSet): string {
  const norm = (s: string): string => s.toLowerCase().replace(/[-_]/g, '');
  const known = [
    ...Object.entries(set.flags).map(([name, spec]) => fileKey(name, spec)),
    ...Object.keys(set.fileFields ?? {}),
    ...Object.keys(set.sections),
  ].filter((k): k is string => k !== undefined);
  const prefix = parent === '' ? '' : `${parent}.`;
  const hit = known.find((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('.') && norm(k.slice(prefix.length)) === norm(key));
  return hit === undefined ? '' : ` (did you mean ${hit}?)`;
}

function describeError(e: ErrorObject, set: FlagSet, writtenAs: ReadonlyMap<string, string>): string {
  const field = fieldOf(e.instancePath);
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') {
    const key = String(params.additionalProperty);
    return `unknown field ${label(field === '' ? key : `${field}.${key}`, writtenAs, true)}${suggestion(field, key, set)}`;
  }
  const what = field === '' ? 'the file' : label(field, writtenAs);
  if (e.keyword === 'enum') return `${what}: must be one of ${(params.allowedValues as unknown[]).filter((v) => typeof v === 'string').join(', ')}`;
  return `${what}: ${e.message ?? e.keyword}`;
}

function describeErrors(errors: readonly ErrorObject[], set: FlagSet, writtenAs: ReadonlyMap<string, string>): string {
  // An enum error on a field also raises its type error; one line per field is enough.
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of errors) {
    const line = describeError(e, set, writtenAs);
    const field = line.split(':')[0] ?? line;
    if (seen.has(field) && e.keyword !== 'additionalProperties') continue;
    seen.add(field);
    lines.push(line);
  }
  return lines.join('; ');
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
