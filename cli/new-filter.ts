/**
 * `actor-edge new-filter NAME [--actor-edge SPEC]`: writes NAME/, a project of its own for one filter (see
 * `new-filter-files.ts`), so a filter can be written, tested and built outside this repository.
 *
 * The project depends on the actor-edge that runs the command: where that is a checkout or an unpacked copy (not
 * inside a node_modules folder), on its directory (`file:`), since the package may not be on any registry; else on
 * its version. `--actor-edge` names another (a tarball from `npm pack`: `file:actor-edge-0.1.0.tgz`, a path from
 * where the command runs).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { UsageError } from '../lib/flags.js';
import { filterProjectFiles, type ProjectDependencies } from './new-filter-files.js';

/** The package's root (this file is dist/cli/new-filter.js). */
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A name that is at once a directory, an npm package, a module file, a filter name and part of a header name. */
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;

export function newFilterUsage(): string {
  return [
    'Usage: actor-edge new-filter NAME [--actor-edge SPEC]',
    '',
    'Writes NAME/: a TypeScript project for one filter (ES module) that adds a response header, with a unit test and',
    'an end-to-end test (actor-edge/testing). Then: cd NAME && npm install && npm test.',
    '',
    '  --actor-edge SPEC  the project\'s actor-edge dependency (default: this copy\'s directory as file:, or its',
    '                     version when it is installed in node_modules), e.g. file:actor-edge-0.1.0.tgz',
    '                     (a file: path is read from where you run this)',
    '',
  ].join('\n');
}

/** Refuses a name that is not lower-case words joined by dashes, saying what it names. */
export function checkFilterName(name: string): void {
  if (!NAME.test(name) || name.length > MAX_NAME) {
    throw new UsageError(
      `new-filter: "${name}" is not a valid filter name: use lower-case letters, digits and single dashes, starting with ` +
        `a letter, at most ${MAX_NAME} characters (it names the directory, the package, the module and the filter)`,
    );
  }
}

interface Manifest {
  readonly version?: string;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly overrides?: Readonly<Record<string, unknown>>;
}

/** What the project asks for: actor-edge as given or as described above; TypeScript and Node's types as this build uses. */
export function projectDependencies(cwd: string, dir: string, spec: string | undefined, root: string = PACKAGE_ROOT): ProjectDependencies {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
  const installed = root.split(path.sep).includes('node_modules');
  // npm reads a file: path from the project's directory; the one given is read from where the command runs.
  const fileSpec = (target: string): string => `file:${path.relative(dir, path.resolve(cwd, target)).split(path.sep).join('/')}`;
  const actorEdge = spec === undefined ? (installed ? `^${manifest.version ?? '0.0.0'}` : fileSpec(root)) : spec.startsWith('file:') ? fileSpec(spec.slice(5)) : spec;
  return {
    actorEdge,
    typescript: manifest.devDependencies?.typescript ?? '^5.9.0',
    typesNode: manifest.devDependencies?.['@types/node'] ?? '^20.0.0',
    ...(manifest.overrides === undefined ? {} : { overrides: manifest.overrides }),
  };
}

/** Writes the project into `cwd`/NAME; refuses a directory that exists and is not empty. Returns the paths written. */
export function writeFilterProject(cwd: string, name: string, spec?: string): string[] {
  checkFilterName(name);
  const dir = path.join(cwd, name);
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    throw new UsageError(`new-filter: ${dir} already exists and is not an empty directory: choose another name, or move it away`);
  }
  const files = filterProjectFiles(name, projectDependencies(cwd, dir, spec));
  for (const [file, text] of files) {
    const target = path.join(dir, ...file.split('/'));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text, { flag: 'wx' }); // never over a file that appeared meanwhile
  }
  return [...files.keys()];
}

/** `actor-edge new-filter`'s flags. */
export const NEW_FILTER_OPTIONS = { 'actor-edge': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

/** The command: parses `argv`, writes the project into `cwd`, prints what it wrote and what to type next. */
export function runNewFilter(argv: readonly string[], cwd: string = process.cwd(), out: (text: string) => void = (t) => void process.stdout.write(t)): void {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: NEW_FILTER_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`new-filter: ${(err as Error).message}\n\n${newFilterUsage()}`);
  }
  if (parsed.values.help === true) {
    out(newFilterUsage());
    return;
  }
  const [name, ...extra] = parsed.positionals;
  if (name === undefined || extra.length > 0) throw new UsageError(`new-filter: give exactly one NAME\n\n${newFilterUsage()}`);
  const written = writeFilterProject(cwd, name, parsed.values['actor-edge']);
  out(
    [
      `Wrote ${name}/: ${written.join(', ')}`,
      '',
      'Next:',
      `  cd ${name}`,
      '  npm install                  # actor-edge, typescript and @types/node',
      '  npm test                     # builds dist/, then the unit and end-to-end tests',
      '',
      'Run it in the local stack (stub, extproc and proxy), from the actor-edge clone:',
      `  npm start -- --filter ${path.join(path.resolve(cwd, name), 'dist', `${name}.js`)}`,
      'or in a proxy of your own deployment:',
      `  npx actor-edge proxy --filter dist/${name}.js --extproc HOST:PORT`,
      '',
    ].join('\n'),
  );
}
