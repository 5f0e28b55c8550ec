/**
 * Every problem of a configuration at once, for `actor-edge validate`: a start stops at the first, but an operator
 * fixing a config file wants the whole list in one run. Each problem names where the value was set: the config
 * file's key (`listeners.tlsCert: file not found: ...`), or the flag or environment variable.
 */
import { existsSync } from 'node:fs';
import { UsageError } from './flags.js';
import { checkTlsFiles, type TlsFileCheck } from './tls/files.js';

export class ConfigProblems extends UsageError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/**
 * Where a value was set, as the operator would look for it: `config file F: section.key` → `section.key` (the
 * report names the file once), a flag or variable as it is.
 */
export function whereSet(source: string | undefined, flag: string): string {
  if (source === undefined || source === 'default') return `--${flag}`;
  const m = /^config file .*?: (.+)$/.exec(source);
  return m === null ? source : (m[1] as string);
}

/** `config file F: key: reason` → `key: reason` (the report names the file once). */
export function withoutFile(message: string): string {
  return message.replace(/^config file .*?: (?=[\w."[\]]+[: ])/, '');
}

/** One problem per file that does not exist, named where its flag was set; `files`: flag name → path. */
export function missingFiles(files: Readonly<Record<string, string | undefined>>, sources: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const [flag, file] of Object.entries(files)) {
    if (file === undefined || file === '' || existsSync(file)) continue;
    problems.push(`${whereSet(sources[flag], flag)}: file not found: ${file}`);
  }
  return problems;
}

/**
 * Every problem of the TLS files in `files` at once: each missing one named where its flag was set (`sources`), and
 * for each one that exists, what is wrong with what it holds.
 */
export function tlsFileProblems(files: readonly TlsFileCheck[], sources: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const f of files) {
    const flag = f.what.replace(/^--/, '');
    if (!existsSync(f.path)) {
      problems.push(`${whereSet(sources[flag], flag)}: file not found: ${f.path}`);
      continue;
    }
    try {
      checkTlsFiles([f]);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      problems.push(withoutFile(err.message));
    }
  }
  return problems;
}

/**
 * For a validator: every problem in one run — the bad values `problems` collected while reading (the file named
 * once), then every TLS file of `files` missing or unreadable — thrown together as ConfigProblems; nothing if none.
 */
export function throwEveryProblem(problems: readonly string[], sources: Readonly<Record<string, string>>, files: readonly TlsFileCheck[]): void {
  const all = [...problems.map(withoutFile), ...tlsFileProblems(files, sources)];
  if (all.length > 0) throw new ConfigProblems(all);
}
