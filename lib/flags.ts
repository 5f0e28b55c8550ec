/**
 * Declarative command-line flags on top of node:util parseArgs. Each component declares its flags once (name,
 * type, environment variable, default, help, and where the flag sits in the config file); `readFlags` merges argv
 * over the environment over a config file's values over the defaults, validates, and returns a frozen, typed
 * object. `--help`, the flag tables and the config file's JSON Schema are generated from the same
 * declarations (`flag-docs.ts`, `flag-schema.ts`), so the documentation cannot drift from the parser.
 */
import { parseArgs } from 'node:util';

interface BaseSpec {
  readonly env: string;
  readonly help: string;
  /** Former names of `env`, still read when `env` is not set, each use with a deprecation warning. */
  readonly envAliases?: readonly string[];
  /** The config file section the flag belongs to (`section: { key: value }`); none: a top-level key. */
  readonly section?: string;
  /** Its key in the config file (default: the flag name camelCased, without its section's name in front). */
  readonly key?: string;
  /** Cannot be set from a config file (e.g. `--config` itself). */
  readonly noFile?: boolean;
  /** A secret: never printed, and a config file may name a file holding it (`key: { file: PATH }`). */
  readonly secret?: boolean;
}
export interface StringFlag extends BaseSpec { readonly type: 'string'; readonly default: string }
export interface OptionalStringFlag extends BaseSpec { readonly type: 'string?' }
export interface NumberFlag extends BaseSpec {
  readonly type: 'number';
  readonly default: number;
  readonly min?: number;
  readonly max?: number;
  /** Allow fractions (default: integers only). */
  readonly float?: boolean;
}
export interface BooleanFlag extends BaseSpec { readonly type: 'boolean'; readonly default: boolean }
export interface ChoiceFlag<C extends string = string> extends BaseSpec {
  readonly type: 'choice';
  readonly choices: readonly C[];
  readonly default: C;
}
/** Repeatable flag; from the environment it is comma-separated. */
export interface ListFlag extends BaseSpec { readonly type: 'list' }

export type FlagSpec = StringFlag | OptionalStringFlag | NumberFlag | BooleanFlag | ChoiceFlag | ListFlag;
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

type ValueOf<S extends FlagSpec> = S extends StringFlag
  ? string
  : S extends OptionalStringFlag
    ? string | undefined
    : S extends NumberFlag
      ? number
      : S extends BooleanFlag
        ? boolean
        : S extends ChoiceFlag<infer C>
          ? C
          : S extends ListFlag
            ? readonly string[]
            : never;

export type FlagValues<T extends FlagSpecs> = { readonly [K in keyof T]: ValueOf<T[K]> };

/** A user error in flags or environment: the CLI prints it with the usage hint and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const TRUE = new Set(['1', 'true', 'on', 'yes']);
const FALSE = new Set(['0', 'false', 'off', 'no']);

function parseBoolean(text: string, source: string): boolean {
  const v = text.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new UsageError(`${source}: expected on|off|true|false, got "${text}"`);
}

function convert(name: string, spec: FlagSpec, raw: string | boolean | string[], source: string): unknown {
  switch (spec.type) {
    case 'string':
    case 'string?':
      return String(raw);
    case 'boolean':
      return typeof raw === 'boolean' ? raw : parseBoolean(String(raw), source);
    case 'list':
      return Object.freeze(
        (Array.isArray(raw) ? raw : String(raw).split(','))
          .flatMap((s) => s.split(','))
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
      );
    case 'choice': {
      const v = String(raw).trim().toLowerCase();
      if (!spec.choices.includes(v)) throw new UsageError(`${source}: expected one of ${spec.choices.join('|')}, got "${raw}"`);
      return v;
    }
    case 'number': {
      const text = String(raw).trim();
      const n = Number(text);
      if (text === '' || !Number.isFinite(n)) throw new UsageError(`${source}: expected a number, got "${raw}"`);
      if (!spec.float && !Number.isInteger(n)) throw new UsageError(`${source}: expected a whole number, got "${raw}"`);
      const min = spec.min ?? 0;
      if (n < min) throw new UsageError(`${source}: must be at least ${min}, got ${n}`);
      if (spec.max !== undefined && n > spec.max) throw new UsageError(`${source}: must be at most ${spec.max}, got ${n}`);
      return n;
    }
    default:
      throw new UsageError(`--${name}: unknown flag type`);
  }
}

export interface ReadFlagsResult<T extends FlagSpecs> {
  readonly help: boolean;
  readonly values: FlagValues<T>;
  /** Where each value came from: `--name`, an environment variable, a config file field, or `default`. */
  readonly sources: Readonly<Record<keyof T & string, string>>;
  /** Deprecated names that were used (each names its replacement). */
  readonly warnings: readonly string[];
}

/**
 * The config file's layer, below argv and the environment: flag name → its value, already checked against the
 * flag's type (`config-file.ts`), and the file field it came from. `resolve` turns a value before it is used (a
 * secret's `{ file }` is read only when no flag or variable overrides it).
 */
export interface FileLayer {
  readonly values: Readonly<Record<string, unknown>>;
  readonly sources: Readonly<Record<string, string>>;
  readonly resolve?: (name: string, value: unknown) => unknown;
}

/** The environment variable that is set for `spec`: its own name, else the first former name that is set. */
function fromEnv(spec: FlagSpec, env: NodeJS.ProcessEnv, warnings: string[]): { name: string; text: string } | undefined {
  for (const name of [spec.env, ...(spec.envAliases ?? [])]) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    if (name !== spec.env) warnings.push(`environment variable ${name} is deprecated: use ${spec.env}`);
    return { name, text };
  }
  return undefined;
}

/**
 * Parses `argv` (without the component name) over `env` over the config file's layer over the defaults. Throws
 * UsageError on bad input; with `problems`, a bad value (or a secret's unreadable file) is added there instead and
 * the flag keeps its default, so `actor-edge validate` can report every one in one run.
 */
export function readFlags<T extends FlagSpecs>(
  specs: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  file?: FileLayer,
  problems?: string[],
): ReadFlagsResult<T> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = { help: { type: 'boolean' } };
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = spec.type === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: spec.type === 'list' };
    if (spec.type === 'boolean') options[`no-${name}`] = { type: 'boolean' };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const given = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  const warnings: string[] = [];
  const tolerant = <V>(read: () => V): V | typeof NOT_READ => {
    if (problems === undefined) return read();
    try {
      return read();
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      problems.push(err.message);
      return NOT_READ;
    }
  };
  for (const [name, spec] of Object.entries(specs)) {
    let raw = given[name];
    let source = `--${name}`;
    if (spec.type === 'boolean' && given[`no-${name}`] === true) raw = false;
    const fromVariable = raw === undefined ? fromEnv(spec, env, warnings) : undefined;
    if (fromVariable !== undefined) {
      raw = fromVariable.text;
      source = fromVariable.name;
    }
    let value: unknown = NOT_READ;
    if (raw !== undefined) {
      const given = raw;
      value = tolerant(() => convert(name, spec, given, source));
    } else if (file !== undefined && name in file.values) {
      const inFile = file.values[name];
      source = file.sources[name] ?? 'config file';
      value = file.resolve === undefined ? inFile : tolerant(() => (file.resolve as NonNullable<FileLayer['resolve']>)(name, inFile));
    }
    if (value !== NOT_READ) {
      values[name] = value;
    } else {
      values[name] = defaultValue(spec);
      source = 'default';
    }
    sources[name] = source;
  }
  return {
    help: given.help === true,
    values: Object.freeze(values) as FlagValues<T>,
    sources: Object.freeze(sources) as Record<keyof T & string, string>,
    warnings: Object.freeze(warnings),
  };
}

/** A value that could not be read (its problem recorded): the flag keeps its default. */
const NOT_READ: unique symbol = Symbol('not read');

/** The value a flag has when nothing sets it. */
export function defaultValue(spec: FlagSpec): unknown {
  return spec.type === 'list' ? Object.freeze([]) : spec.type === 'string?' ? undefined : spec.default;
}

function describeDefault(spec: FlagSpec): string {
  switch (spec.type) {
    case 'string?':
    case 'list':
      return '';
    case 'boolean':
      return ` (default ${spec.default ? 'on' : 'off'})`;
    case 'choice':
      return ` (${spec.choices.join('|')}; default ${spec.default})`;
    default:
      return spec.secret === true ? '' : ` (default ${spec.default === '' ? 'empty' : String(spec.default)})`;
  }
}

function camelCase(kebab: string): string {
  return kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `fileKey`'s default: the flag name camelCased, without its section's name in front (`cache-ttl-ms` → `ttlMs`). */
function defaultKey(name: string, section: string | undefined): string {
  const prefix = section === undefined ? '' : `${section.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-`;
  return camelCase(prefix !== '' && name.startsWith(prefix) ? name.slice(prefix.length) : name);
}

/** Where the flag sits in the config file, as a dotted path (`cache.ttlMs`); undefined when it cannot be set there. */
export function fileKey(name: string, spec: FlagSpec): string | undefined {
  if (spec.noFile === true) return undefined;
  const key = spec.key ?? defaultKey(name, spec.section);
  return spec.section === undefined ? key : `${spec.section}.${key}`;
}

/** The help line's bracket: the environment variable (and its former names) and the config file key. */
export function flagWhere(name: string, spec: FlagSpec): string {
  const aliases = spec.envAliases?.length ? ` (formerly ${spec.envAliases.join(', ')})` : '';
  const key = fileKey(name, spec);
  return `${spec.env}${aliases}${key === undefined ? '' : `; ${key}`}`;
}

/** The value placeholder of `--name VALUE` in help. */
export function valueHint(spec: FlagSpec): string {
  return spec.type === 'boolean' ? '' : spec.type === 'number' ? ' N' : spec.type === 'list' ? ' VALUE (repeatable)' : ' VALUE';
}

/** The flags of `section` (undefined: the flags in no section), in declaration order. */
export function flagsIn(specs: FlagSpecs, section: string | undefined): [string, FlagSpec][] {
  return Object.entries(specs).filter(([, spec]) => spec.section === section);
}

/** Renders `--help` for a component from its flag declarations (no config file). */
export function formatHelp(command: string, summary: string, specs: FlagSpecs): string {
  return renderHelp(command, summary, specs, undefined);
}

function renderHelp(
  command: string,
  summary: string,
  specs: FlagSpecs,
  sections: Readonly<Record<string, string>> | undefined,
  fileFields: Readonly<Record<string, FileField>> = {},
  variables: Readonly<Record<string, string>> = {},
): string {
  const lines = [`Usage: actor-edge ${command} [flags]`, '', summary, ''];
  // A flag set with no config file (no flag has a file key) reads like plain flags.
  const withFile = sections !== undefined && Object.entries(specs).some(([name, spec]) => fileKey(name, spec) !== undefined);
  lines.push(
    withFile
      ? 'Flags (each can also be set by the environment variable shown, or in the --config file at the key shown):'
      : 'Flags (each can also be set by the environment variable shown):',
  );
  const groups: [string | undefined, [string, FlagSpec][]][] = [[undefined, flagsIn(specs, undefined)]];
  for (const section of Object.keys(sections ?? {})) groups.push([section, flagsIn(specs, section)]);
  for (const [section, flags] of groups) {
    if (flags.length === 0) continue;
    if (section !== undefined) lines.push('', `${section}: ${sections?.[section] ?? ''}`);
    for (const [name, spec] of flags) {
      const where = withFile ? flagWhere(name, spec) : spec.env;
      lines.push(`  --${name}${valueHint(spec)}    [${where}]`);
      lines.push(`      ${spec.help}${describeDefault(spec)}`);
    }
    for (const [path, field] of Object.entries(fileFields)) {
      if (section === undefined || !path.startsWith(`${section}.`)) continue;
      lines.push(`  (config file only)    [${path}]`, `      ${field.help}`);
    }
  }
  lines.push('', '  --help', '      Show this text.', '  --version', '      Print the actor-edge and Node.js versions.');
  const names = Object.keys(variables);
  if (names.length > 0) lines.push('', 'Environment:', ...names.flatMap((name) => [`  ${name}`, `      ${variables[name]}`]));
  return lines.join('\n') + '\n';
}

/**
 * A component's flags as one declaration: what `--help`, the flag tables, the config file reader and its
 * JSON Schema are all made from.
 */
export interface FlagSet<T extends FlagSpecs = FlagSpecs> {
  /** `actor-edge <command>`. */
  readonly command: string;
  readonly summary: string;
  /** The config file's sections in order, each with what it holds. */
  readonly sections: Readonly<Record<string, string>>;
  readonly flags: T;
  /** Config file fields that are no flag's (a dotted path → its JSON Schema and help), e.g. filters with options. */
  readonly fileFields?: Readonly<Record<string, FileField>>;
  /** Environment variables read besides the flags' (name → what it does), e.g. LOG_LEVEL. */
  readonly variables?: Readonly<Record<string, string>>;
}

/** The variable every component that logs reads (lib/logger.ts). */
export const LOG_LEVEL_VARIABLE = { LOG_LEVEL: 'Log level: trace, debug, info, warn, error or silent (default info).' } as const;

/** A config-file-only field. `flag`: the flag that replaces it on the command line, if any. */
export interface FileField {
  readonly help: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly flag?: string;
  /** Its name in the older flat form of the file (read with a deprecation warning). */
  readonly flat?: string;
}

/** Checks a flag set's declarations once (at module load): sections declared, file keys unique. */
export function defineFlagSet<T extends FlagSpecs>(set: FlagSet<T>): FlagSet<T> {
  const seen = new Map<string, string>();
  const claim = (key: string, by: string): void => {
    const other = seen.get(key);
    if (other !== undefined) throw new Error(`${set.command}: ${by} and ${other} both use the config file key "${key}"`);
    seen.set(key, by);
  };
  for (const [name, spec] of Object.entries(set.flags)) {
    if (spec.section !== undefined && !(spec.section in set.sections)) throw new Error(`${set.command}: --${name} is in the undeclared section "${spec.section}"`);
    const key = fileKey(name, spec);
    if (key !== undefined) claim(key, `--${name}`);
  }
  for (const path of Object.keys(set.fileFields ?? {})) claim(path, `the field ${path}`);
  return Object.freeze(set);
}

/** `--help` of a flag set. */
export function flagSetHelp(set: FlagSet): string {
  return renderHelp(set.command, set.summary, set.flags, set.sections, set.fileFields, set.variables);
}

/** What every component's `read<Component>Config(argv, env)` returns (frozen): `config` is undefined when `help`. */
export interface ConfigRead<C> {
  readonly help: boolean;
  readonly config: C | undefined;
}

/** Reads `specs` (argv over the environment over the defaults) and builds the component's frozen config from them. */
export function readConfig<T extends FlagSpecs, C>(
  specs: T,
  build: (values: FlagValues<T>) => C,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ConfigRead<C> {
  const { help, values } = readFlags(specs, argv, env);
  return Object.freeze({ help, config: help ? undefined : build(values) });
}
