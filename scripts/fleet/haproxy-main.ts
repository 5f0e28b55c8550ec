#!/usr/bin/env node
/**
 * HAProxy as one of the fleet's processes: `node dist/scripts/fleet/haproxy-main.js --config FILE --socket PATH
 * --frontend HOST:PORT`. Runs Debian's `haproxy -db -f FILE` as its child, passes its output on, and writes the
 * project's "ready" line (lib/logger.ts) once the runtime API answers, so lib/launch.ts starts and stops it like
 * any component (HAProxy itself writes no such line, and does not stop when its launcher goes away: this process
 * does, and takes HAProxy with it). SIGTERM stops HAProxy; HAProxy exiting on its own exits this process with 1.
 */
import { spawn } from 'node:child_process';
import { readFlags, UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { createLogger, logReady } from '../../lib/logger.js';
import { splitLines } from '../../lib/ready-line.js';
import { HaproxyRuntime } from './haproxy-runtime.js';

const FLAGS = {
  config: { type: 'string?', env: 'FLEET_HAPROXY_CONFIG', help: 'the HAProxy configuration file' },
  socket: { type: 'string?', env: 'FLEET_HAPROXY_SOCKET', help: 'the stats socket the configuration declares (the runtime API)' },
  frontend: { type: 'string?', env: 'FLEET_HAPROXY_FRONTEND', help: 'the frontend address the configuration binds (reported in the ready line)' },
  binary: { type: 'string', env: 'FLEET_HAPROXY_BINARY', default: 'haproxy', help: 'the haproxy executable' },
} as const satisfies FlagSpecs;

/** How long HAProxy may take to answer on its socket after it started. */
const START_TIMEOUT_MS = 10_000;

const log = createLogger('haproxy');

function fail(message: string, code: number): never {
  log.error(message);
  process.exit(code);
}

function flags(): FlagValues<typeof FLAGS> {
  try {
    return readFlags(FLAGS, process.argv.slice(2)).values;
  } catch (err) {
    if (err instanceof UsageError) fail(`haproxy-main: ${err.message}`, 2);
    throw err;
  }
}
const { config, socket, frontend, binary } = flags();
if (config === undefined || socket === undefined || frontend === undefined) fail('haproxy-main: --config, --socket and --frontend are required', 2);

let stopping = false;
const child = spawn(binary, ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
// HAProxy's own lines (alerts, warnings, "Server ... is DOWN") go to stderr as they are.
for (const stream of [child.stdout, child.stderr]) splitLines(stream, (line) => process.stderr.write(`${line}\n`));
child.on('error', (err: NodeJS.ErrnoException) => {
  fail(err.code === 'ENOENT' ? `"${binary}" not found: install HAProxy (Debian: apt-get install haproxy)` : `cannot start ${binary}: ${err.message}`, 2);
});
child.on('exit', (code, signal) => {
  if (stopping) process.exit(0);
  fail(`haproxy exited (${signal ?? `code ${code}`})`, 1);
});
process.on('exit', () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    stopping = true;
    child.kill('SIGTERM');
  });
}

const runtime = new HaproxyRuntime(socket);
const deadline = Date.now() + START_TIMEOUT_MS;
for (;;) {
  try {
    if ((await runtime.command('show info', 1000)).includes('Name: HAProxy')) break;
  } catch {
    /* not listening yet */
  }
  if (Date.now() > deadline) fail(`haproxy did not answer on ${socket} within ${START_TIMEOUT_MS} ms`, 1);
  await new Promise((r) => setTimeout(r, 50));
}
logReady(log, { frontend, socket });
