/**
 * `npm run fleet` end to end: the real script (stub, extproc, two replicas, HAProxy) on free ports, requests
 * through HAProxy answered by the replicas, each a miss that went through extproc over mTLS (extproc's port
 * refuses a plaintext gRPC client and a TLS client without a certificate, and counts the replicas' handshakes as
 * accepted), then SIGTERM: everything stops, exit 0, the frontend refuses connections.
 * Needs processes: `npm run fleet` is a script that starts processes, stopped by SIGTERM with its exit code checked.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { request } from 'undici';
import { waitFor } from '../lib/testing/wait.js';
import { metricValue } from '../lib/testing/scrape.js';
import { plaintextProcess, tlsWithoutCertificate } from '../extproc/testing/refused-clients.js';

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'start-fleet.js');
const SUFFIX = 'demo.actors.resources.substrate.ate.dev';
const HOST = `actor-003.${SUFFIX}`;
const started: ChildProcess[] = [];
after(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

/** An address extproc's ready line names (`grpc`, `admin`), from the fleet's output. */
function extprocAddress(output: string, listener: string): string | undefined {
  return output.split('\n').map((l) => (l.startsWith('extproc ') ? new RegExp(`"${listener}":"([^"]+)"`).exec(l)?.[1] : undefined)).find((a) => a !== undefined);
}

test('npm run fleet: ready banner, misses served through HAProxy by the replicas over mTLS to extproc, a clean stop on SIGTERM', async (t) => {
  try {
    await promisify(execFile)('haproxy', ['-v']);
  } catch {
    return t.skip('haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)');
  }
  const child = spawn(process.execPath, [SCRIPT, '--port', '0', '--replicas', '2', '--actors', '8'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  started.push(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // The banner is written a line at a time: wait for its last line, so every line before it has arrived too.
  await waitFor(() => {
    assert.ok(child.exitCode === null, `the fleet exited before it was ready:\n${output}`);
    return /^fleet +\| +stop +Ctrl-C$/m.test(output);
  }, 60_000, 'the fleet banner');
  assert.match(output, /actor-edge fleet is ready: 2 replicas behind HAProxy \(affinity\)/);
  const port = Number(/ingress\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
  const res = await request(`http://127.0.0.1:${port}/`, { headers: { host: HOST } });
  const body = (await res.body.json()) as { actor?: string };
  assert.equal(res.statusCode, 200);
  assert.equal(body.actor, 'actor-003');
  assert.match(String(res.headers['x-fleet-replica']), /^r[12]$/);

  // The proxy → extproc hop is mTLS: extproc's port refuses what is not a replica's certificate, and every
  // miss (one per actor, the caches are fresh) reached extproc through an accepted handshake.
  assert.match(output, /mTLS\s+on every internal hop, proxy → extproc included/);
  const grpcAddress = extprocAddress(output, 'grpc');
  const extprocAdmin = extprocAddress(output, 'admin');
  assert.ok(grpcAddress !== undefined && extprocAdmin !== undefined, `extproc's ready line:\n${output}`);
  assert.equal(await plaintextProcess(grpcAddress, HOST), 'UNAVAILABLE');
  assert.match(await tlsWithoutCertificate(grpcAddress), /CERTIFICATE_REQUIRED/);
  const replicas = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const miss = await request(`http://127.0.0.1:${port}/`, { headers: { host: `actor-00${i}.${SUFFIX}` } });
    assert.equal(((await miss.body.json()) as { actor?: string }).actor, `actor-00${i}`);
    assert.equal(miss.statusCode, 200);
    replicas.add(String(miss.headers['x-fleet-replica']));
  }
  assert.equal(replicas.size, 2, 'both replicas served misses');
  const scrape = await (await request(`http://${extprocAdmin}/metrics`)).body.text();
  assert.ok(metricValue(scrape, 'actor_edge_extproc_tls_handshakes_total{outcome="accepted"}') >= 2, 'each replica connected over mTLS');
  assert.ok(metricValue(scrape, 'actor_edge_extproc_tls_handshakes_total{outcome="refused_handshake"}') >= 2, 'the two test clients were refused');
  child.kill('SIGTERM');
  assert.equal(await exited, 0, output);
  assert.match(output, /stopped\s*$/);
  assert.ok(await refused(port), 'HAProxy is gone');
});
