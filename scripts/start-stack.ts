#!/usr/bin/env node
/**
 * `npm start`: the whole local stack (apiserver-stub with 64 workers on 127.0.1.x, extproc, proxy), each as its
 * own process with its defaults. Every component reads its usual environment variables, e.g.
 * `PROXY_ACTOR_CACHE=off npm start`; the standard `OTEL_*` ones reach the proxy and extproc the same way
 * (`OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start`: both trace, each under
 * its own service name unless OTEL_SERVICE_NAME names one for both). Every internal hop runs mTLS with development certificates made at start
 * (`npm start -- --tls off` or STACK_TLS=off: plaintext). Launcher settings: STACK_READY_TIMEOUT_MS (30000), STACK_STOP_GRACE_MS (10000),
 * STACK_LOG_FORMAT=pretty|json (pretty). LOG_LEVEL filters what is shown; the components always log at least at
 * info, because the launcher reads their "ready" lines.
 */
import { runStack } from './stack/launcher.js';
import { levelValue } from './stack/log-format.js';
import { generateStackCertificates, PLAINTEXT_WARNING, tlsSwitch, type StackCertificates } from './stack/tls.js';

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`start-stack: ${name} must be a positive number of milliseconds, got "${raw}"\n`);
    process.exit(2);
  }
  return n;
}

process.stdout.on('error', () => undefined);

const requestedLevel = process.env.LOG_LEVEL || 'info';
const minLevel = levelValue(requestedLevel);
if (minLevel === undefined) {
  process.stderr.write(`start-stack: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "${requestedLevel}"\n`);
  process.exit(2);
}

const tls = tlsSwitch(process.argv.slice(2), process.env);
if (tls === undefined) {
  process.stderr.write('start-stack: --tls (STACK_TLS) must be on or off\n');
  process.exit(2);
}
let certificates: StackCertificates | undefined;
if (tls === 'on') {
  try {
    certificates = await generateStackCertificates();
  } catch (err) {
    process.stderr.write(`start-stack: cannot make the development certificates (--tls off runs without them): ${(err as Error).message}\n`);
    process.exit(1);
  }
}

const code = await runStack({
  env: { ...certificates?.env, ...process.env, STACK_TLS: tls, LOG_LEVEL: minLevel > 30 ? 'info' : requestedLevel },
  minLevel,
  parentPid: process.ppid,
  write: (line) => process.stdout.write(`${line}\n`),
  readyTimeoutMs: numberFromEnv('STACK_READY_TIMEOUT_MS', 30000),
  graceMs: numberFromEnv('STACK_STOP_GRACE_MS', 10000),
  format: { raw: process.env.STACK_LOG_FORMAT === 'json', color: process.stdout.isTTY === true && !process.env.NO_COLOR },
  notices: tls === 'off' ? [PLAINTEXT_WARNING] : [],
});
await certificates?.remove();
process.exit(code);
