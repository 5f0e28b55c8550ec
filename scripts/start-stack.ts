#!/usr/bin/env node
/**
 * `npm start`: the whole local stack (apiserver-stub with 64 workers on 127.0.1.x, extproc, proxy), each as its
 * own process with its defaults. Every component reads its usual environment variables, e.g.
 * `PROXY_ACTOR_CACHE=off npm start`; the standard `OTEL_*` ones reach the proxy and extproc the same way
 * (`OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start`: both trace, each under
 * its own service name unless OTEL_SERVICE_NAME names one for both). Every internal hop runs mTLS with development certificates made at start
 * (`npm start -- --tls off` or STACK_TLS=off: plaintext). The launcher's own flags (`npm start -- --help`) are in
 * `stack/flags.ts`; `--filter` hands filter modules to the proxy. LOG_LEVEL filters what is shown; the components
 * always log at least at info, because the launcher reads their "ready" lines.
 */
import { UsageError } from '../lib/flags.js';
import { runStack } from './stack/launcher.js';
import { levelValue } from './stack/log-format.js';
import { filterArgs, readStackFlags, stackHelp, type StackFlags } from './stack/flags.js';
import { egressEnv } from './stack/wiring.js';
import { generateStackCertificates, PLAINTEXT_WARNING, type StackCertificates } from './stack/tls.js';

/** A usage error: one line, and where the flags are listed; exit 2 (nothing was started). */
function refuse(message: string): never {
  process.stderr.write(`npm start: ${message} (npm start -- --help lists the flags)\n`);
  process.exit(2);
}

process.stdout.on('error', () => undefined);

let flags: StackFlags;
try {
  const read = readStackFlags(process.argv.slice(2), process.env);
  if (read.help) {
    process.stdout.write(stackHelp());
    process.exit(0);
  }
  flags = read.flags;
} catch (err) {
  if (err instanceof UsageError) refuse(err.message.split('\n')[0] ?? err.message);
  throw err;
}

const requestedLevel = process.env.LOG_LEVEL || 'info';
const minLevel = levelValue(requestedLevel);
if (minLevel === undefined) refuse(`LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "${requestedLevel}"`);

let certificates: StackCertificates | undefined;
if (flags.tls === 'on') {
  try {
    certificates = await generateStackCertificates();
  } catch (err) {
    process.stderr.write(`npm start: cannot make the development certificates (--tls off runs without them): ${(err as Error).message}\n`);
    process.exit(1);
  }
}

const code = await runStack({
  env: {
    ...certificates?.env,
    // the egress listener needs the certificates: with --tls off there is none
    ...(certificates === undefined ? {} : { ...egressEnv(certificates.files), STACK_CA_FILE: certificates.files.ca }),
    ...process.env,
    STACK_TLS: flags.tls,
    LOG_LEVEL: minLevel > 30 ? 'info' : requestedLevel,
  },
  // Paths are relative to where `npm start` was typed; npm itself runs this in the package's directory.
  args: { proxy: filterArgs(flags.filter, process.env.INIT_CWD || process.cwd()) },
  minLevel,
  parentPid: process.ppid,
  write: (line) => process.stdout.write(`${line}\n`),
  readyTimeoutMs: flags['ready-timeout-ms'],
  graceMs: flags['stop-grace-ms'],
  format: { raw: flags['log-format'] === 'json', color: process.stdout.isTTY === true && !process.env.NO_COLOR },
  notices: flags.tls === 'off' ? [PLAINTEXT_WARNING] : [],
});
await certificates?.remove();
process.exit(code);
