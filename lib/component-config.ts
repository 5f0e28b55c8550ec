/**
 * How every component reads its configuration, in one place: argv over the environment over the `--config` file
 * over the defaults (`flags.ts`, `config-file.ts`), then the component's builder turns the values into its frozen
 * config. A builder's error that names a flag set by the file is told as the file's field, so the operator sees
 * where to fix it.
 */
import { readFlags, UsageError, type FlagSet, type FlagSpecs, type FlagValues } from './flags.js';
import { readConfigFile } from './config-file.js';

/** What a read gives: `help` (print it), or the frozen config with the deprecated names it used. */
export type ComponentConfigRead<C> =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'config';
      readonly config: C;
      /** Deprecated names used (flat config file keys, former variables): log them once started. */
      readonly warnings: readonly string[];
      /** The `--config` file read, if any. */
      readonly file: string | undefined;
      /** The config file's own fields (dotted path → value), for builders that take them. */
      readonly fields: Readonly<Record<string, unknown>>;
      /** Where each flag's value came from (`--name`, a variable, `config file F: key`, or `default`). */
      readonly sources: Readonly<Record<string, string>>;
    };

export interface ReadOptions {
  /** Collect bad values here instead of throwing at the first (`actor-edge validate`); see `readFlags`. */
  readonly problems?: string[];
}

export interface BuildContext {
  readonly sources: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly file: string | undefined;
}

/**
 * Reads `set` and builds the component's config with `build`. The set's `config` flag (if declared) names the
 * file. Throws UsageError naming the flag, variable or file field at fault.
 */
export function readComponentConfig<T extends FlagSpecs, C>(
  set: FlagSet<T>,
  build: (values: FlagValues<T>, context: BuildContext) => C,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  opts: ReadOptions = {},
): ComponentConfigRead<C> {
  // Collecting problems, the first read (for --help and --config) leaves them to the second, which reports them.
  const first = readFlags(set.flags, argv, env, undefined, opts.problems === undefined ? undefined : []);
  if (first.help) return { kind: 'help' };
  const path = 'config' in set.flags ? (first.values as Record<string, unknown>).config : undefined;
  const file = typeof path === 'string' ? readConfigFile(path, set) : undefined;
  const read = file === undefined && opts.problems === undefined ? first : readFlags(set.flags, argv, env, file?.layer, opts.problems);
  const fields = file?.fields ?? {};
  const context: BuildContext = { sources: read.sources, fields, file: file?.path };
  let config: C;
  try {
    config = build(read.values, context);
  } catch (err) {
    throw err instanceof UsageError ? new UsageError(fromFile(err.message, read.sources)) : err;
  }
  return Object.freeze({ kind: 'config', config, warnings: Object.freeze([...(file?.warnings ?? []), ...read.warnings]), file: file?.path, fields, sources: read.sources });
}

/** `--name: reason` where --name came from the file → `config file F: section.key (--name): reason`. */
function fromFile(message: string, sources: Readonly<Record<string, string>>): string {
  const m = /^--([a-z0-9-]+)\b(.*)$/s.exec(message);
  const source = m === null ? undefined : sources[m[1] ?? ''];
  if (m === null || source === undefined || !source.startsWith('config file ')) return message;
  return `${source} (--${m[1]})${m[2]}`;
}
