/**
 * extproc in front of a real apiserver-stub (both in the test's process, started from the flags their processes
 * take; the stub's workers on a private loopback network), driven by the Envoy-like client. The published address
 * is then used to reach the actor on its worker.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { InProcessComponent } from '../lib/testing/component.js';
import { startStubInProcess } from '../apiserver-stub/testing/in-process.js';
import { startExtprocInProcess } from './testing/in-process.js';
import { workerNet } from '../lib/loopback.js';
import { EnvoyLikeClient } from './testing/envoy-like-client.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const host = (name: string, port?: number): string => `${name}.demo.${SUFFIX}${port ? `:${port}` : ''}`;

let stub: InProcessComponent;
let extproc: InProcessComponent;
let client: EnvoyLikeClient;
let workerPort: number;

async function json<T = any>(method: string, url: string): Promise<T> {
  const res = await fetch(url, { method });
  assert.ok(res.ok, `${method} ${url}: ${res.status}`);
  return (await res.json()) as T;
}

function get(address: string, authority: string): Promise<{ status: number; body: string }> {
  const [ip, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const req = http.request({ host: ip, port, path: '/hello', headers: { host: authority, 'x-request-id': 'e2e-1' }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('e2e', () => {
  before(async () => {
    const net = await workerNet();
    workerPort = net.port;
    stub = await startStubInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '4', '--worker-ip-base', net.ipBase,
      '--worker-port', String(net.port), '--actors', '8', '--atespace', 'demo', '--cold-resume-ms', '1000', '--resolve-latency-ms', '0',
    ]);
    extproc = await startExtprocInProcess([
      '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.addresses.grpc!, '--worker-port', String(net.port),
      // Well above the 1 s cold resume. (The control-plane-gone test sends a short budget of its own, as the proxy
      // does with every stream, so it waits out neither this nor the 15 s default.)
      '--resume-budget-ms', '5000',
    ]);
    client = new EnvoyLikeClient(extproc.addresses.grpc!);
  });

  after(async () => {
    client?.close();
    await extproc?.stop();
    await stub?.stop();
  });

  test('a suspended actor is resumed and the published address reaches it', async () => {
    const before = await json(`GET`, `http://${stub.addresses.admin}/actors/demo/actor-001`);
    assert.equal(before.status, 'SUSPENDED');
    const { verdict } = await client.process({ authority: host('actor-001', 8080) });
    assert.equal(verdict.kind, 'continue');
    if (verdict.kind !== 'continue') return;
    const md = verdict.metadata['envoy.filters.listener.original_dst']!;
    assert.equal(md.port, '8080');
    assert.deepEqual(verdict.setHeaders['x-ate-target-port'], { rawValue: '8080', value: '', append: false });
    const actor = await json(`GET`, `http://${stub.addresses.admin}/actors/demo/actor-001`);
    assert.equal(actor.status, 'RUNNING');
    assert.equal(md.local, `${actor.workerIp}:${workerPort}`);
    const res = await get(md.local!, host('actor-001'));
    assert.equal(res.status, 200, res.body);
    const app = JSON.parse(res.body) as { actor: string; atespace: string; worker: string };
    assert.equal(app.actor, 'actor-001');
    assert.equal(app.worker, actor.workerIp);
  });

  test('100 concurrent requests for one suspended actor: 1 ResumeActor, 100 successes', async () => {
    const name = 'actor-002';
    assert.equal((await json(`GET`, `http://${stub.addresses.admin}/actors/demo/${name}`)).status, 'SUSPENDED');
    await json('POST', `http://${stub.addresses.admin}/stats/reset`);
    await json('POST', `http://${extproc.addresses.admin}/stats/reset`);
    const results = await Promise.all(Array.from({ length: 100 }, () => client.process({ authority: host(name) })));
    const locals = new Set(results.map((r) => (r.verdict.kind === 'continue' ? r.verdict.metadata['envoy.filters.listener.original_dst']?.local : r.verdict.body)));
    assert.equal(results.filter((r) => r.verdict.kind === 'continue').length, 100);
    assert.equal(locals.size, 1, [...locals].join(', '));
    const stubStats = await json(`GET`, `http://${stub.addresses.admin}/stats`);
    assert.deepEqual(stubStats.rpc.ResumeActor, { OK: 1 });
    const stats = await json(`GET`, `http://${extproc.addresses.admin}/stats`);
    assert.equal(stats.requests.ok, 100);
    assert.deepEqual(stats.resumeCalls, { OK: 1 });
    assert.equal(stats.flightJoins, 99);
  });

  test('an unknown actor is 404 from the control plane', async () => {
    const { verdict } = await client.process({ authority: host('no-such-actor') });
    assert.equal(verdict.kind === 'immediate' && `${verdict.status} ${verdict.body}`, '404 actor demo/no-such-actor not found');
  });

  test('control plane gone: 503 unavailable, and no error logged for normal stream ends', async () => {
    await stub.stop();
    // Retried within the data plane's budget (the backoff starts at 100 ms), then answered with the last error.
    const { verdict } = await client.process({ authority: host('actor-003'), metadata: { 'actor-edge-resume-budget-ms': '300' } });
    assert.equal(verdict.kind === 'immediate' && `${verdict.status} ${verdict.body}`, '503 actor demo/actor-003 unavailable');
    const errors = extproc.logs().filter((l) => (l.level as number) >= 50 || l.msg === 'ext_proc stream error');
    assert.deepEqual(errors, []);
  });
});
