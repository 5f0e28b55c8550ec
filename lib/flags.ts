/**
 * Declarative command-line flags on top of node:util parseArgs. Each component declares its flags once (name,
 * type, environment variable, default, help); `readFlags` merges argv over the environment over the defaults,
 * validates, and returns a frozen, typed object. `--help` text is generated from the same declarations, so the
 * documentation cannot drift from the parser.
 */
import { parseArgs } from 'node:util';

interface BaseSpec {
  readonly env: string;
  readonly help: string;
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
}

/** Parses `argv` (without the component name) with `env` as fallback. Throws UsageError on bad input. */
export function readFlags<T extends FlagSpecs>(
  specs: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
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
  for (const [name, spec] of Object.entries(specs)) {
    let raw = given[name];
    let source = `--${name}`;
    if (spec.type === 'boolean' && given[`no-${name}`] === true) raw = false;
    if (raw === undefined && env[spec.env] !== undefined && env[spec.env] !== '') {
      raw = env[spec.env];
      source = spec.env;
    }
    if (raw === undefined) {
      values[name] = spec.type === 'list' ? Object.freeze([]) : spec.type === 'string?' ? undefined : spec.default;
    } else {
      values[name] = convert(name, spec, raw, source);
    }
  }
  return { help: given.help === true, values: Object.freeze(values) as FlagValues<T> };
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
      return ` (default ${String(spec.default)})`;
  }
}

/** Renders `--help` for a component from its flag declarations. */
export function formatHelp(command: string, summary: string, specs: FlagSpecs): string {
  const lines = [`Usage: actor-edge ${command} [flags]`, '', summary, '', 'Flags (each can also be set by the environment variable shown):'];
  for (const [name, spec] of Object.entries(specs)) {
    const value = spec.type === 'boolean' ? '' : spec.type === 'number' ? ' N' : spec.type === 'list' ? ' VALUE (repeatable)' : ' VALUE';
    lines.push(`  --${name}${value}    [${spec.env}]`);
    lines.push(`      ${spec.help}${describeDefault(spec)}`);
  }
  lines.push('  --help', '      Show this text.');
  return lines.join('\n') + '\n';
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
