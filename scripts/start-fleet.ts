#!/usr/bin/env node
/**
 * `npm run fleet -- [--replicas N] [--mode affinity|roundrobin|sni] [--port P]`: the local stack with a fleet of
 * proxy replicas behind HAProxy instead of one proxy: apiserver-stub (with its workers on 127.x.y.z), extproc, N
 * `actor-edge proxy` processes (each its own cache and ports) and Debian's `haproxy` in front (scripts/fleet/).
 * Prints where to send requests and waits; Ctrl-C (or SIGTERM) stops everything and removes the temporary
 * directory that holds HAProxy's configuration and socket. Every internal hop runs mTLS with the development
 * certificates `npm start` makes (the proxy → extproc hop included); `--tls off` (STACK_TLS=off): plaintext, warned
 * about before anything starts. A TLS variable the user set wins over the generated one.
 */
import { wiringFlags } from './stack/wiring.js';
import { FLEET_FLAGS } from './fleet/flags.js';
import { formatHelp, readFlags, UsageError } from '../lib/flags.js';
import { DEFAULT_ACTOR_SUFFIX } from '../lib/actor-ref.js';
import { describeExit, type Launched } from '../lib/launch.js';
import { launchComponent } from '../cli/launch-component.js';
import { workerNet } from '../lib/loopback.js';
import { formatLine, levelOf, levelValue } from './stack/log-format.js';
import { detectionMs, Fleet } from './fleet/fleet.js';
import { REPLICA_HEADER } from './fleet/haproxy-config.js';
import { generateStackCertificates, PLAINTEXT_WARNING, type StackCertificates } from './stack/tls.js';

const FLAGS = FLEET_FLAGS;

const SUMMARY = 'A fleet of proxy replicas (each its own process and cache) behind HAProxy, with apiserver-stub and extproc.';
const ATESPACE = 'demo';
const SUFFIX = process.env.ACTOR_SUFFIX || DEFAULT_ACTOR_SUFFIX;

process.stdout.on('error', () => undefined);
let flags;
try {
  flags = readFlags(FLAGS, process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`fleet: ${err.message}\n\n${formatHelp('fleet', SUMMARY, FLAGS)}`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(formatHelp('fleet', SUMMARY, FLAGS).replace('Usage: actor-edge fleet [flags]', 'Usage: npm run fleet -- [flags]'));
  process.exit(0);
}
const v = flags.values;
if (v['drain-delay-ms'] <= detectionMs()) {
  process.stderr.write(`fleet: --drain-delay-ms must exceed the ${detectionMs()} ms HAProxy needs to see a failing /ready\n`);
  process.exit(2);
}

const minLevel = levelValue(process.env.LOG_LEVEL || 'info') ?? 30;
const fmt = { raw: process.env.STACK_LOG_FORMAT === 'json', color: process.stdout.isTTY === true && !process.env.NO_COLOR, width: 14 };
const say = (text: string): void => void process.stdout.write(`${formatLine('fleet', text, fmt)}\n`);
const show = (label: string, line: string): void => {
  // HAProxy's own lines are not JSON: always shown.
  if ((levelOf(line) ?? Infinity) >= minLevel) process.stdout.write(`${formatLine(label, line, fmt)}\n`);
};

let certificates: StackCertificates | undefined;
if (v.tls === 'on') {
  try {
    certificates = await generateStackCertificates();
  } catch (err) {
    process.stderr.write(`fleet: cannot make the development certificates (--tls off runs without them): ${(err as Error).message}\n`);
    process.exit(1);
  }
} else {
  say(PLAINTEXT_WARNING);
}
/** The generated TLS variables the user did not set: each component reads its own. */
const tlsEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(certificates?.env ?? {}).filter(([name]) => process.env[name] === undefined));
const opts = { keepLines: 20, env: { ...tlsEnv, LOG_LEVEL: minLevel > 30 ? 'info' : process.env.LOG_LEVEL || 'info' } };

const started: Launched[] = [];
let fleet: Fleet | undefined;
let stopping = false;

async function stopAll(code: number): Promise<never> {
  stopping = true;
  await fleet?.stop().catch((err: unknown) => say(`stopping the fleet: ${(err as Error).message}`));
  for (const p of started.reverse()) await p.stop();
  await certificates?.remove();
  say('stopped');
  process.exit(code);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    say(`${sig}: stopping`);
    void stopAll(0);
  });
}

try {
  const net = await workerNet();
  const stub = await launchComponent(
    'apiserver-stub',
    ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '16', '--worker-ip-base', net.ipBase, '--worker-port', String(net.port), '--worker-capacity', String(Math.ceil(v.actors / 12)), '--actors', String(v.actors), '--atespace', ATESPACE, '--actor-suffix', SUFFIX],
    { ...opts, onLine: (l) => show('apiserver-stub', l) },
  );
  started.push(stub);
  const extproc = await launchComponent(
    'extproc',
    ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...wiringFlags('extproc', { apiserver: stub.addresses['grpc'] as string, workerPort: net.port }), '--actor-suffix', SUFFIX],
    { ...opts, onLine: (l) => show('extproc', l) },
  );
  started.push(extproc);
  for (const p of started) void p.exited.then(() => !stopping && (say(`${p.label} exited unexpectedly (${describeExit(p.exit!)})`), void stopAll(1)));
  fleet = await Fleet.start({
    mode: v.mode,
    replicas: v.replicas,
    slots: v.replicas,
    backends: { apiserverGrpc: stub.addresses['grpc'] as string, extprocGrpc: extproc.addresses['grpc'] as string, workerPort: net.port },
    proxyFlags: ['--cache-ttl-ms', String(v['cache-ttl-ms'])],
    env: tlsEnv,
    drainDelayMs: v['drain-delay-ms'],
    hashBalanceFactor: v['hash-balance-factor'],
    haproxyLog: true,
    port: v.port,
    statsPage: true,
    atespace: ATESPACE,
    actorSuffix: SUFFIX,
    onLine: show,
  });
  const host = `actor-000.${ATESPACE}.${SUFFIX}`;
  const port = fleet.frontend.port;
  const tryLine =
    v.mode === 'sni'
      ? `curl --cacert ${fleet.caFile} --resolve ${host}:${port}:127.0.0.1 https://${host}:${port}/`
      : `curl -i -H 'Host: ${host}' ${fleet.url}/     (${REPLICA_HEADER}: the replica that answered)`;
  const lines = [
    `actor-edge fleet is ready: ${v.replicas} replicas behind HAProxy (${v.mode})`,
    `  ingress   ${fleet.url}`,
    `  try       ${tryLine}`,
    `  replicas  ${fleet.running().map((s) => `${s.name} ${fleet!.adminUrl(s)}/stats`).join('  ')}`,
    ...(fleet.statsPage === undefined ? [] : [`  haproxy   http://127.0.0.1:${fleet.statsPage.port}/ (stats page)  runtime API: ${fleet.runtime.socketPath}`]),
    v.tls === 'on'
      ? `  mTLS      on every internal hop, proxy → extproc included (plaintext: npm run fleet -- --tls off)`
      : `  mTLS      off: every internal hop is plaintext`,
    `  stop      Ctrl-C`,
  ];
  for (const l of lines) say(l);
} catch (err) {
  say(`cannot start the fleet: ${(err as Error).message}`);
  await stopAll(1);
}
