/**
 * `actor-edge validate [component] --config FILE [flags]` (component: proxy unless named): parses and checks
 * everything the component checks at start-up, prints what it would run and exits 0; or prints the field or file
 * at fault and the reason and exits 1. It never binds a listener or connects anywhere.
 */
import { UsageError } from '../lib/flags.js';
import { ConfigProblems } from '../lib/config-problems.js';
import { describeValid } from '../lib/validation.js';
import { COMPONENTS } from './components.js';

function validatable(): string[] {
  return Object.entries(COMPONENTS)
    .filter(([, c]) => c.validator !== undefined)
    .map(([name]) => name);
}

export function validateUsage(): string {
  return [
    'Usage: actor-edge validate [component] --config FILE [flags]',
    '',
    `Checks a configuration as the component would at start-up, without starting it: every flag, environment`,
    `variable and config file field; for the proxy also each filter module (imported, its factory run) and the`,
    `certificate and bundle files. Prints what it would run (exit 0), or the field or file at fault (exit 1).`,
    '',
    `Components: ${validatable().join(', ')} (default proxy). Flags: the component's own (actor-edge <component> --help).`,
    '',
  ].join('\n');
}

/** Where the validation writes its answer: the process's own streams, or a caller's (a test's) collector. */
export interface ValidateOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const PROCESS_OUTPUT: ValidateOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs the validation; resolves to the exit code. */
export async function runValidate(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, out: ValidateOutput = PROCESS_OUTPUT): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.stdout(validateUsage());
    return 0;
  }
  const [first, ...rest] = argv;
  const named = first !== undefined && !first.startsWith('-');
  const name = named ? first : 'proxy';
  const load = COMPONENTS[name]?.validator;
  if (load === undefined) throw new UsageError(`validate: "${name}" has no configuration to check (${validatable().join(', ')})\n\n${validateUsage()}`);
  const validate = await load();
  try {
    out.stdout(describeValid(await validate(named ? rest : argv, env)));
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    if (err instanceof ConfigProblems && err.problems.length > 1) {
      // Every problem on its own line, the file named once.
      const file = argv[argv.indexOf('--config') + 1];
      const from = argv.includes('--config') && file !== undefined ? ` (${file})` : '';
      out.stderr(`actor-edge validate: ${name} configuration is not valid${from}, ${err.problems.length} problems:\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
      return 1;
    }
    out.stderr(`actor-edge validate: ${name} configuration is not valid: ${err.message}\n`);
    return 1;
  }
}
