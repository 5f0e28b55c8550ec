import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FLEET_MODES, haproxyConfig, PLAN_DEFAULTS, type FleetMode, type HaproxyPlan } from './haproxy-config.js';

const run = promisify(execFile);

function plan(mode: FleetMode, extra: Partial<HaproxyPlan> = {}): HaproxyPlan {
  return {
    ...PLAN_DEFAULTS,
    mode,
    listen: { host: '127.0.0.1', port: 18080 },
    statsSocket: '/tmp/actor-edge-test-haproxy.sock',
    servers: [1, 2, 3, 4].map((i) => ({ name: `r${i}`, id: i, address: { host: '127.0.0.1', port: 19000 + i }, checkPort: 19100 + i, enabled: i < 4 })),
    ...extra,
  };
}

/** The lines of `section` (e.g. `backend replicas`) up to the next blank line. */
function section(text: string, header: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(header);
  assert.notEqual(start, -1, `no "${header}" section`);
  const end = lines.indexOf('', start);
  return lines.slice(start + 1, end === -1 ? undefined : end).map((l) => l.trim());
}

test('affinity: consistent hash of Host with a load bound; checks on /ready; retries only where nothing can be delivered twice', () => {
  const text = haproxyConfig(plan('affinity'));
  const backend = section(text, 'backend replicas');
  for (const line of [
    'mode http',
    'balance hdr(host)',
    'hash-type consistent',
    'hash-balance-factor 300',
    'option httpchk GET /ready',
    'http-check expect status 200',
    'option redispatch 1',
    'retries 3',
    'retry-on conn-failure empty-response response-timeout',
    'http-request disable-l7-retry unless { method GET HEAD OPTIONS }',
  ]) {
    assert.ok(backend.includes(line), `backend lacks "${line}"`);
  }
  // Every server has a fixed id and is checked on its admin port; a spare slot is declared in maintenance.
  assert.ok(backend.includes('server r1 127.0.0.1:19001 id 1 check port 19101'));
  assert.ok(backend.includes('server r4 127.0.0.1:19004 id 4 check port 19104 disabled'));
  // A client's forwarding headers never pass for HAProxy's own.
  const frontend = section(text, 'frontend fleet');
  for (const h of ['Forwarded', 'X-Forwarded-Host', 'X-Real-IP']) assert.ok(frontend.includes(`http-request del-header ${h}`));
  assert.ok(frontend.includes('option forwardfor'));
});

test('sni: TCP passthrough hashing the ClientHello SNI; roundrobin: no hash at all', () => {
  const sni = haproxyConfig(plan('sni'));
  const frontend = section(sni, 'frontend fleet');
  assert.ok(frontend.includes('mode tcp'));
  assert.ok(frontend.includes('tcp-request content accept if { req.ssl_hello_type 1 }'));
  const backend = section(sni, 'backend replicas');
  assert.ok(backend.includes('balance hash req.ssl_sni,lower'));
  assert.ok(backend.includes('hash-type consistent'));
  assert.ok(!backend.some((l) => l.startsWith('retry-on')), 'retry-on is HTTP-only');
  const rr = section(haproxyConfig(plan('roundrobin')), 'backend replicas');
  assert.ok(rr.includes('balance roundrobin'));
  assert.ok(!rr.some((l) => l.startsWith('hash-')));
});

test('a plan without servers, or with a repeated name or id, is refused', () => {
  assert.throws(() => haproxyConfig(plan('affinity', { servers: [] })), /at least one server/);
  const one = plan('affinity').servers[0]!;
  assert.throws(() => haproxyConfig(plan('affinity', { servers: [one, { ...one, name: 'other' }] })), /unique/);
});

test('haproxy -c accepts the configuration of every mode (with the stats page)', async (t) => {
  try {
    await run('haproxy', ['-v']);
  } catch {
    t.skip('haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)');
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-haproxy-check-'));
  try {
    for (const mode of FLEET_MODES) {
      const file = path.join(dir, `${mode}.cfg`);
      await writeFile(file, haproxyConfig(plan(mode, { statsPage: { host: '127.0.0.1', port: 18081 }, statsSocket: path.join(dir, 'stats.sock'), log: true })));
      const { stdout, stderr } = await run('haproxy', ['-c', '-f', file]);
      assert.match(stdout, /Configuration file is valid/, mode);
      assert.doesNotMatch(stderr, /WARNING|ALERT/, `${mode}: ${stderr}`);
    }
    // And it is a real check: a broken line is refused.
    const broken = path.join(dir, 'broken.cfg');
    await writeFile(broken, haproxyConfig(plan('affinity')).replace('balance hdr(host)', 'balance hdr(host'));
    await assert.rejects(run('haproxy', ['-c', '-f', broken]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
