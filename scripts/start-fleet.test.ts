/**
 * `npm run fleet` end to end: the real script (stub, extproc, two replicas, HAProxy) on free ports, a request
 * through HAProxy answered by a replica, then SIGTERM: everything stops, exit 0, the frontend refuses connections.
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

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'start-fleet.js');
const HOST = 'actor-003.demo.actors.resources.substrate.ate.dev';
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

test('npm run fleet: ready banner, a request served through HAProxy by a replica, a clean stop on SIGTERM', async (t) => {
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
  await waitFor(() => {
    assert.ok(child.exitCode === null, `the fleet exited before it was ready:\n${output}`);
    return /ingress\s+http:\/\/127\.0\.0\.1:(\d+)/.test(output);
  }, 60_000, 'the fleet banner');
  assert.match(output, /actor-edge fleet is ready: 2 replicas behind HAProxy \(affinity\)/);
  const port = Number(/ingress\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
  const res = await request(`http://127.0.0.1:${port}/`, { headers: { host: HOST } });
  const body = (await res.body.json()) as { actor?: string };
  assert.equal(res.statusCode, 200);
  assert.equal(body.actor, 'actor-003');
  assert.match(String(res.headers['x-fleet-replica']), /^r[12]$/);
  child.kill('SIGTERM');
  assert.equal(await exited, 0, output);
  assert.match(output, /stopped\s*$/);
  assert.ok(await refused(port), 'HAProxy is gone');
});
