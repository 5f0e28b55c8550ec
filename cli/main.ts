#!/usr/bin/env node
/** `actor-edge <component> [flags]`: the one entry point for every process the project runs. */
import { UsageError } from '../lib/flags.js';
import { ListenError } from '../lib/listen-error.js';
import { StartFailure } from '../lib/start-failure.js';
import { COMPONENTS } from './components.js';
import { runNewFilter } from './new-filter.js';
import { runValidate } from './validate.js';
import { versionText, wantsVersion } from './version.js';

function usage(): string {
  const rows = Object.entries(COMPONENTS).map(([name, c]) => `  ${name.padEnd(16)}${c.summary}`);
  return [
    'Usage: actor-edge <component> [flags]',
    '       actor-edge validate [component] --config FILE [flags]',
    '       actor-edge new-filter NAME      (a project for your own filter: NAME/)',
    '       actor-edge --version',
    '',
    'Components:',
    ...rows,
    '',
    'Run `actor-edge <component> --help` for its flags, `actor-edge validate --help` for checking a configuration.',
    '',
  ].join('\n');
}

async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return;
  }
  if (name === '--version') {
    process.stdout.write(versionText());
    return;
  }
  if (name === 'validate') {
    // A filter module may leave timers behind: the answer is given, so end here.
    process.exit(await runValidate(rest));
  }
  if (name === 'new-filter') {
    runNewFilter(rest);
    return;
  }
  const component = COMPONENTS[name];
  if (!component) throw new UsageError(`unknown component "${name}"\n\n${usage()}`);
  if (wantsVersion(rest)) {
    process.stdout.write(versionText());
    return;
  }
  const mod = await component.load();
  await mod.main(rest);
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`actor-edge: ${err.message}\n`);
    process.exit(2);
  }
  // A port that cannot be bound says which setting moves it; its stack would only point into node:net.
  if (err instanceof ListenError) {
    process.stderr.write(`actor-edge ${err.message}\n`);
    process.exit(1);
  }
  // A start that failed for a reason its process already logged: one line, no stack.
  if (err instanceof StartFailure) {
    process.stderr.write(`actor-edge: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`actor-edge: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
