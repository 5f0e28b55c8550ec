/**
 * `npm start` end to end: the real launcher and real components, every listener on an OS-chosen port and the
 * workers on a random loopback network, so this runs beside any other stack.
 * Needs processes: the launcher (`npm start`) starts every component as its own process; that is what is tested.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { request } from 'undici';
import { workerNet } from '../lib/loopback.js';
import { plaintextProcess, tlsWithoutCertificate } from '../extproc/testing/refused-clients.js';
import { waitFor } from '../lib/testing/wait.js';
import { OtlpReceiver } from '../lib/testing/otlp-receiver.js';
import { runScript } from '../lib/testing/run-script.js';
import { takePort } from '../lib/testing/taken-port.js';
import { UsageError } from '../lib/flags.js';
import { readStackFlags } from './stack/flags.js';

const run = promisify(execFile);

const LAUNCHER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'start-stack.js');
const HOST = 'actor-000.demo.actors.resources.substrate.ate.dev';
const FILTER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../proxy/testing/fixtures/rewrite-header.js');

interface Stack {
  readonly launcher: ChildProcess;
  readonly output: string[];
  readonly pids: Readonly<Record<string, number>>;
  readonly ingress: string;
  readonly exited: Promise<number | null>;
}

const launched: ChildProcess[] = [];
after(() => {
  for (const c of launched) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});


/** True once `pid` no longer runs (gone, or a zombie nobody has reaped yet). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

interface LaunchOptions {
  /** Run the launcher as a child of `sh`, the way `npm start` does; the shell prints the launcher's pid. */
  readonly viaShell?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  /** Wait for the banner (default); false returns at once, for stacks that are expected to fail. */
  readonly waitReady?: boolean;
  /** The launcher's flags (`npm start -- ARGS`). */
  readonly args?: readonly string[];
}

async function launch({ viaShell = false, env = {}, waitReady = true, args = [] }: LaunchOptions = {}): Promise<Stack> {
  const net = await workerNet();
  const command = viaShell ? ['/bin/sh', ['-c', `"${process.execPath}" "${LAUNCHER}" & echo "launcher pid $!"; wait`]] as const : [process.execPath, [LAUNCHER, ...args]] as const;
  const launcher = spawn(command[0], command[1], {
    env: {
      ...process.env,
      PROXY_ACTOR_CACHE: 'on',
      LOG_LEVEL: 'info',
      STACK_LOG_FORMAT: 'pretty',
      STACK_READY_TIMEOUT_MS: '20000',
      STACK_STOP_GRACE_MS: '5000',
      APISERVER_LISTEN: '127.0.0.1:0',
      APISERVER_ADMIN: '127.0.0.1:0',
      APISERVER_WORKERS: '4',
      WORKER_IP_BASE: net.ipBase,
      WORKER_PORT: String(net.port),
      EXTPROC_WORKER_PORT: String(net.port),
      EXTPROC_LISTEN: '127.0.0.1:0',
      EXTPROC_ADMIN: '127.0.0.1:0',
      PROXY_LISTEN: '127.0.0.1:0',
      PROXY_ADMIN: '127.0.0.1:0',
      // the egress listener exists only with the stack's certificates (not with --tls off)
      ...(env['STACK_TLS'] === 'off' ? {} : { PROXY_EGRESS_LISTEN: '127.0.0.1:0' }),
      APISERVER_DESTINATIONS: '127.0.0.2:0,127.0.0.3:0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launched.push(launcher);
  const output: string[] = [];
  let buf = '';
  const collect = (chunk: Buffer): void => {
    buf += chunk.toString('utf8');
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    output.push(...lines);
  };
  launcher.stdout!.on('data', collect);
  launcher.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  const pidsOf = (): Record<string, number> => {
    const pids: Record<string, number> = {};
    for (const line of output) {
      const m = /^stack +\| started (\S+) \(pid (\d+)\)$/.exec(line);
      if (m?.[1] && m[2]) pids[m[1]] = Number(m[2]);
    }
    return pids;
  };
  if (!waitReady) {
    return { launcher, output, get pids() { return pidsOf(); }, ingress: '', exited };
  }
  // The banner is written a line at a time: wait for its last line, so every line before it is in `output` too.
  await waitFor(() => {
    if (launcher.exitCode !== null) throw new Error(`launcher exited ${launcher.exitCode}:\n${output.join('\n')}`);
    return output.some((l) => /^stack +\| +stop +Ctrl-C$/.test(l));
  }, 30000, 'the launcher banner');
  const ingress = output.map((l) => /^stack +\| +ingress +(http:\/\/\S+)$/.exec(l)?.[1]).find((u) => u !== undefined);
  assert.ok(ingress !== undefined, `the banner names the ingress:\n${output.join('\n')}`);
  const pids = pidsOf();
  assert.deepEqual(Object.keys(pids), ['apiserver-stub', 'extproc', 'proxy']);
  return { launcher, output, pids, ingress, exited };
}

// Side by side, a few at a time: each test starts its own stack (its own ports, its own worker network) and reads only its own launcher's output.
describe('npm start', { concurrency: 3 }, () => {
  test('npm start -- --filter: serves the curl example through the proxy and the filter, says the chain, and stops cleanly on SIGTERM', async () => {
    const stack = await launch({ args: ['--filter', FILTER] });
    // The proxy's start-up line and the banner both name the loaded chain.
    assert.ok(stack.output.some((l) => l.startsWith(`proxy          | INFO  filter chain: rewrite-header (${FILTER})`)), stack.output.join('\n'));
    assert.ok(stack.output.includes(`stack          |   filters  rewrite-header (${FILTER})`), stack.output.join('\n'));
    const curl = stack.output.find((l) => l.includes('curl -H'));
    assert.ok(curl?.includes(`curl -H 'Host: ${HOST}' ${stack.ingress}/`), `banner has the curl example: ${curl}`);

    const res = await request(`${stack.ingress}/?echo_headers=1`, { headers: { host: HOST } });
    const body = (await res.body.json()) as { actor: string; atespace: string; headers: Record<string, string> };
    assert.equal(res.statusCode, 200);
    assert.equal(body.headers['x-filtered-by'], 'rewrite-header', 'the filter ran');
    assert.equal(body.actor, 'actor-000');
    assert.equal(body.atespace, 'demo');

    // Egress, as the banner says (the request above woke actor-000): its certificate from the stub, then curl through
    // the listener to the destination its seeded policy allows, verifying the listener with the stack's CA.
    const commands = stack.output.map((l) => /^stack +\| +(?:try +)?(curl (?:-s -X POST|-p -x) .*)$/.exec(l)?.[1]).filter((c): c is string => c !== undefined);
    assert.equal(commands.length, 2, `the banner's two egress commands:\n${stack.output.join('\n')}`);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-'));
    try {
      await run('/bin/sh', ['-c', commands[0] as string], { cwd: dir });
      const tunnelled = await run('/bin/sh', ['-c', `${commands[1] as string} -sS --max-time 10`], { cwd: dir });
      assert.match(tunnelled.stdout, /^destination destination-1 127\.0\.0\.2:\d+$/m, 'the allowed destination answered through the tunnel');
      const other = /127\.0\.0\.2:\d+/.exec(commands[1] as string)?.[0] ?? '';
      const second = stack.output.map((l) => /"destination-2":"([^"]+)"/.exec(l)?.[1]).find((a) => a !== undefined);
      assert.ok(second !== undefined && other !== '', "the stub's ready line lists both destinations");
      const denied = await run('/bin/sh', ['-c', `${(commands[1] as string).replace(other, second)} -sS --max-time 10 -o /dev/null -w '%{http_connect}'`], { cwd: dir }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      assert.equal(denied.stdout, '403', 'actor-000 may not reach the second destination');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    for (const name of ['apiserver-stub', 'extproc', 'proxy']) {
      assert.ok(stack.output.some((l) => l.startsWith(`${name.padEnd(14)} | `)), `${name}'s lines are prefixed with its name`);
    }

    // mTLS by default on the ext_proc hop: extproc's port refuses a plaintext gRPC client and a TLS client without
    // a certificate (the proxy's own stream above went through).
    assert.ok(stack.output.some((l) => /^stack +\| +mTLS +on every internal hop/.test(l)));
    const grpcAddress = stack.output.map((l) => (l.startsWith('extproc ') ? /"grpc":"([^"]+)"/.exec(l)?.[1] : undefined)).find((a) => a !== undefined);
    assert.ok(grpcAddress, "extproc's ready line");
    assert.equal(await plaintextProcess(grpcAddress, HOST), 'UNAVAILABLE');
    assert.match(await tlsWithoutCertificate(grpcAddress), /CERTIFICATE_REQUIRED/);

    stack.launcher.kill('SIGTERM');
    assert.equal(await stack.exited, 0, stack.output.slice(-15).join('\n'));
    for (const [name, pid] of Object.entries(stack.pids)) assert.ok(gone(pid), `${name} (pid ${pid}) still runs`);
    assert.ok(stack.output.some((l) => /^stack +\| stopped$/.test(l)));
  });

  // One stack for two settings that do not touch each other: the plaintext hops, and tracing with the log level.
  test('npm start -- --tls off with OTEL_* and LOG_LEVEL=warn: plaintext everywhere, said at start-up by the launcher and by the components; spans of both services in the client\'s trace, the worker continues it, access lines and x-request-id stay', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      const stack = await launch({ env: { ...receiver.env(), LOG_LEVEL: 'warn', STACK_TLS: 'off' } });
      const first = stack.output.findIndex((l) => /^stack +\| WARN +--tls off: every internal hop is plaintext/.test(l));
      const started = stack.output.findIndex((l) => /^stack +\| started /.test(l));
      assert.ok(first >= 0 && first < started, 'the launcher warns before it starts anything');
      assert.ok(stack.output.some((l) => /^extproc +\| WARN +ext_proc listener is plaintext/.test(l)));
      assert.ok(stack.output.some((l) => /^proxy +\| WARN +ext_proc hop is plaintext/.test(l)));
      assert.ok(!stack.output.some((l) => /^stack +\| +egress /.test(l)), 'no egress listener without the certificates');

      // The traced request is the stack's first: a miss, so ext_proc takes part in its trace.
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await request(`${stack.ingress}/?echo_headers=1`, { headers: { host: HOST, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      const body = (await res.body.json()) as { headers: Record<string, string> };
      assert.equal(res.statusCode, 200);
      const requestId = String(res.headers['x-request-id']);
      assert.match(requestId, /^[0-9a-f-]{36}$/);
      assert.match(body.headers.traceparent ?? '', new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the worker got a traceparent of the trace');
      const spans = await receiver.waitForTrace(traceId, (s) => s.some((x) => x.service === 'actor-edge-extproc') && s.some((x) => x.service === 'actor-edge-proxy' && x.kind === 2), 'spans of both services');
      const upstream = spans.find((s) => s.service === 'actor-edge-proxy' && s.kind === 3 && s.name === 'GET');
      assert.equal(body.headers.traceparent, `00-${traceId}-${upstream?.spanId}-01`, "the worker's parent is the proxy's upstream span");
      const ids = [requestId];
      for (const host of [HOST, HOST.replace('actor-000', 'actor-001'), 'not-an-actor.example.com']) {
        const r = await request(`${stack.ingress}/`, { headers: { host } });
        await r.body.dump();
        ids.push(String(r.headers['x-request-id']));
      }
      assert.equal(new Set(ids).size, 4, `every response has its own x-request-id: ${ids.join(' ')}`);
      for (const id of ids) {
        assert.match(id, /^[0-9a-f-]{36}$/);
        await waitFor(() => stack.output.some((l) => /^proxy +\| ACCESS access /.test(l) && l.includes(`requestId=${id}`)), 5000, `the access line of ${id} at LOG_LEVEL=warn`);
      }
      assert.ok(!stack.output.some((l) => /^proxy +\| INFO /.test(l)), 'no info lines shown at warn');
      const plain = await request(`${stack.ingress}/`, { headers: { host: HOST } });
      await plain.body.dump();
      assert.equal(plain.statusCode, 200);
      stack.launcher.kill('SIGTERM');
      assert.equal(await stack.exited, 0, stack.output.slice(-15).join('\n'));
    } finally {
      await receiver.close();
    }
  });

  test('a component that dies is reported and stops the whole stack with a non-zero exit', async () => {
    const stack = await launch();
    process.kill(stack.pids.extproc!, 'SIGKILL');
    assert.equal(await stack.exited, 1);
    assert.ok(
      stack.output.some((l) => l.includes('extproc exited unexpectedly (signal SIGKILL)')),
      stack.output.slice(-10).join('\n'),
    );
    for (const [name, pid] of Object.entries(stack.pids)) assert.ok(gone(pid), `${name} (pid ${pid}) still runs`);
  });

  test('a component that cannot start is reported, the ones already running are stopped, and the exit is non-zero', async () => {
    const stack = await launch({ env: { PROXY_LISTEN: 'not-an-address' }, waitReady: false });
    assert.equal(await stack.exited, 1);
    assert.ok(stack.output.some((l) => /^proxy +\| .*PROXY_LISTEN|^proxy +\| .*--listen/.test(l)), stack.output.slice(-10).join('\n'));
    assert.ok(stack.output.some((l) => /^stack +\| proxy exited unexpectedly \(exit code 2\)/.test(l)), stack.output.slice(-10).join('\n'));
    assert.deepEqual(Object.keys(stack.pids), ['apiserver-stub', 'extproc', 'proxy']);
    for (const [name, pid] of Object.entries(stack.pids)) assert.ok(gone(pid), `${name} (pid ${pid}) still runs`);
  });

  test('a port already taken: the component says which and how to move it, in one line; the launcher repeats it and stops the rest', async () => {
    const taken = await takePort();
    try {
      const stack = await launch({ env: { EXTPROC_LISTEN: taken.address }, waitReady: false });
      assert.equal(await stack.exited, 1);
      const why = `${taken.address} is already in use (set EXTPROC_LISTEN or --listen)`;
      const tail = stack.output.slice(-10).join('\n');
      assert.ok(stack.output.includes(`extproc        | actor-edge extproc: ${why}`), tail);
      assert.ok(stack.output.includes(`stack          | extproc exited unexpectedly (exit code 1): ${why}: stopping the stack`), tail);
      assert.ok(!stack.output.some((l) => /^\S+ +\| +at /.test(l)), `no stack trace:\n${tail}`);
      for (const [name, pid] of Object.entries(stack.pids)) assert.ok(gone(pid), `${name} (pid ${pid}) still runs`);
    } finally {
      await taken.release();
    }
  });

  test('npm start -- --help prints the launcher\'s flags and starts nothing; an unknown flag or a missing value is refused', async () => {
    const help = await runScript(LAUNCHER, ['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: npm start/);
    for (const text of ['--filter VALUE (repeatable)    [PROXY_FILTERS]', '--tls on|off    [STACK_TLS]', 'EXTPROC_LISTEN=127.0.0.1:50051', 'Logs:']) assert.ok(help.stdout.includes(text), text);
    assert.ok(!help.stdout.includes('started'), 'nothing started');
    // The launcher refuses whatever its flag reader refuses, as one line and exit 2: shown by one run of it; the
    // other refusals through the same reader in this process.
    const run = await runScript(LAUNCHER, ['--no-such-flag']);
    assert.equal(run.code, 2, '--no-such-flag');
    assert.match(run.stderr, /^npm start: .*\(npm start -- --help lists the flags\)\n$/, run.stderr);
    for (const args of [['--filter'], ['--tls', 'maybe']]) {
      assert.throws(() => readStackFlags(args, {}), UsageError, args.join(' '));
    }
  });

  test('components stop by themselves when the launcher is killed outright', async () => {
    const stack = await launch();
    stack.launcher.kill('SIGKILL');
    await stack.exited;
    await waitFor(() => Object.values(stack.pids).every(gone), 15000, 'every component to exit');
  });

  test('the stack stops when the process that started it goes away without passing on a signal', async () => {
    const stack = await launch({ viaShell: true });
    const launcherPid = Number(stack.output.map((l) => /^launcher pid (\d+)$/.exec(l)?.[1]).find((p) => p !== undefined));
    assert.ok(launcherPid > 0);
    stack.launcher.kill('SIGKILL'); // the shell, as when npm's shell is killed
    await waitFor(() => gone(launcherPid) && Object.values(stack.pids).every(gone), 15000, 'the launcher and every component to exit');
    await waitFor(() => stack.output.some((l) => /is gone: stopping$/.test(l)), 15000, 'the launcher to say why it stopped');
  });
});
