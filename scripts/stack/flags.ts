/**
 * `npm start`'s own flags, declared and parsed with the components' flag library (`lib/flags.ts`): each has its
 * environment variable, and a flag wins over its variable, as everywhere else. `--filter` is the proxy's own flag
 * handed through: it reads PROXY_FILTERS when not given, so `npm start -- --filter a.js` and
 * `PROXY_FILTERS=a.js npm start` load the same chain, and with both the flag's list replaces the variable's. An
 * unknown flag or a missing value is a UsageError (exit 2): a flag the launcher silently dropped would start a
 * stack other than the one asked for.
 */
import path from 'node:path';
import { readFlags, valueHint, type FlagSpec, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { PROXY_FLAGS } from '../../proxy/config.js';
import { EXTPROC_FLAGS } from '../../extproc/config.js';
import { STUB_FLAGS } from '../../apiserver-stub/config.js';
import { STACK_ORDER, type ComponentName } from './wiring.js';

export const STACK_FLAGS = {
  tls: {
    type: 'choice',
    env: 'STACK_TLS',
    choices: ['on', 'off'],
    default: 'on',
    help: 'mTLS on every internal hop with development certificates made at start (removed at stop); off: plaintext, with a warning.',
  },
  filter: {
    type: 'list',
    env: PROXY_FLAGS.filter.env,
    help: "A filter module for the proxy (its --filter), relative to where npm start runs; repeatable, in chain order. Replaces PROXY_FILTERS's list.",
  },
  'ready-timeout-ms': { type: 'number', env: 'STACK_READY_TIMEOUT_MS', default: 30000, min: 1, help: 'How long each component may take to log "ready".' },
  'stop-grace-ms': { type: 'number', env: 'STACK_STOP_GRACE_MS', default: 10000, min: 1, help: 'How long each component may take to stop after SIGTERM before it is killed.' },
  'log-format': {
    type: 'choice',
    env: 'STACK_LOG_FORMAT',
    choices: ['pretty', 'json'],
    default: 'pretty',
    help: "pretty: each component's log lines as LEVEL msg key=value; json: as the component wrote them.",
  },
} as const satisfies FlagSpecs;

export type StackFlags = FlagValues<typeof STACK_FLAGS>;

/** `--help`, or the launcher's settings. Throws UsageError on an unknown flag, a missing or a bad value. */
export function readStackFlags(argv: readonly string[], env: NodeJS.ProcessEnv): { help: true } | { help: false; flags: StackFlags } {
  const read = readFlags(STACK_FLAGS, argv, env);
  return read.help ? { help: true } : { help: false, flags: read.values };
}

/**
 * The proxy's `--filter` flags for `modules`, each resolved against `cwd`: npm runs a script in the package's
 * directory, so a path relative to where the user typed `npm start` (INIT_CWD) would otherwise miss.
 */
export function filterArgs(modules: readonly string[], cwd: string): string[] {
  return modules.flatMap((m) => ['--filter', m.startsWith('file:') ? m : path.resolve(cwd, m)]);
}

const COMPONENT_FLAGS: Readonly<Record<ComponentName, Readonly<Record<string, FlagSpec>>>> = { 'apiserver-stub': STUB_FLAGS, extproc: EXTPROC_FLAGS, proxy: PROXY_FLAGS };

/** The listeners of each component, by the flags that place them (what to move when a port is taken). */
const LISTENERS: Readonly<Record<ComponentName, readonly string[]>> = {
  'apiserver-stub': ['listen', 'admin', 'worker-port'],
  extproc: ['listen', 'admin'],
  proxy: ['listen', 'admin', 'tls-listen', 'connect-listen', 'connect-tls-listen'],
};

/** `names` joined with ", " and wrapped to `width` columns: the first line after `lead`, the rest under `indent`. */
function wrapped(names: readonly string[], lead: string, indent = '    ', width = 110): string[] {
  const lines: string[] = [];
  let line = '';
  const prefix = (): string => (lines.length === 0 ? lead : indent);
  for (const name of names) {
    const next = line === '' ? name : `${line}, ${name}`;
    if (prefix().length + next.length > width && line !== '') {
      lines.push(`${prefix()}${line},`);
      line = name;
    } else line = next;
  }
  if (line !== '') lines.push(`${prefix()}${line}`);
  return lines;
}

/** `npm start -- --help`. */
export function stackHelp(): string {
  const flags = Object.entries(STACK_FLAGS).flatMap(([name, spec]) => {
    const dflt = spec.type === 'list' ? '' : ` (default ${spec.default})`;
    const hint = spec.type === 'choice' ? ` ${spec.choices.join('|')}` : valueHint(spec);
    return [`  --${name}${hint}    [${spec.env}]`, `      ${spec.help}${dflt}`];
  });
  const components = STACK_ORDER.flatMap((name) => {
    const specs = COMPONENT_FLAGS[name];
    const listeners = LISTENERS[name].map((flag) => {
      const spec = specs[flag] as FlagSpec;
      return `${spec.env}${'default' in spec ? `=${String(spec.default)}` : ''}`;
    });
    const rest = Object.entries(specs)
      .filter(([flag]) => !LISTENERS[name].includes(flag))
      .map(([, spec]) => spec.env);
    return [`  ${name} (actor-edge ${name} --help says what each does):`, ...wrapped(listeners, '    listeners: ', ' '.repeat(15)), ...wrapped(rest, '    ')];
  });
  return [
    'Usage: npm start [-- flags]',
    '',
    'Starts the local stack: apiserver-stub (64 workers on 127.0.1.x), extproc and proxy, each its own process,',
    'one after another, each once the previous one is ready; then prints where to send requests. Ctrl-C stops it.',
    '',
    'Flags (each can also be set by the environment variable shown; the flag wins):',
    ...flags,
    '  --help',
    '      Show this text and start nothing.',
    '',
    'Every component reads its own environment variables, passed through (PROXY_ACTOR_CACHE=off npm start):',
    ...components,
    '  LOG_LEVEL: what is shown (trace, debug, info, warn, error, silent; default info). OTEL_*: tracing (proxy and extproc).',
    '',
    'Logs: every line a component writes goes to this terminal (stdout), prefixed with its name; the launcher',
    'writes no files. The development certificates live in a temporary directory, removed when the stack stops.',
    '',
  ].join('\n');
}
