/**
 * The apiserver-stub and a separately started worker as processes: the listeners they announce, a worker that attaches,
 * serves and is killed, the stub's clean exit, and `--help` (and a missing flag's exit code) of both commands.
 * Needs processes: a worker process is killed, and the stub's exit code, `--help` output and usage exit are checked.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI_SCRIPT as CLI } from '../cli/launch-component.js';
import { startComponent, type RunningComponent } from '../lib/testing/component.js';
import { workerNet } from '../lib/loopback.js';
import { actorHost } from '../lib/testing/actors.js';
import { eventually } from '../lib/testing/wait.js';
import { ipv4Add } from './ip.js';
import { admin, controlClient, workerRequest, type ControlTestClient } from './testing/clients.js';

interface WorkerStats {
  alive: boolean;
  attached: boolean;
  actors: string[];
  requests: number;
}

describe('apiserver-stub and worker as processes', () => {
  let stub: RunningComponent;
  let worker: RunningComponent | undefined;
  let client: ControlTestClient;
  let net: { ipBase: string; port: number };
  let externalIp: string;

  before(async () => {
    net = await workerNet();
    externalIp = ipv4Add(net.ipBase, 100);
    stub = await startComponent('apiserver-stub', [
      '--listen', '127.0.0.1:0',
      '--admin', '127.0.0.1:0',
      '--workers', '2',
      '--actors', '3',
      '--cold-resume-ms', '5',
    ], { env: { WORKER_IP_BASE: net.ipBase, WORKER_PORT: String(net.port) } });
    client = controlClient(stub.addresses.grpc!);
  });
  after(async () => {
    client.close();
    await worker?.kill();
    await stub.stop();
  });

  const workers = async (): Promise<Record<string, WorkerStats>> =>
    (await admin<{ workers: Record<string, WorkerStats> }>(stub.addresses.admin!, 'GET', '/stats')).body.workers;

  test('the stub logs where each listener is and attaches its in-process workers from the environment', async () => {
    assert.match(stub.addresses.grpc!, /^127\.0\.0\.1:\d+$/);
    assert.match(stub.addresses.admin!, /^127\.0\.0\.1:\d+$/);
    assert.equal(stub.addresses.workers, `${net.ipBase}-${ipv4Add(net.ipBase, 1)}:${net.port}`);
    const listed = stub.logs().find((l) => l.msg === 'in-process workers listening');
    assert.deepEqual(listed?.workers, [`${net.ipBase}:${net.port}`, `${ipv4Add(net.ipBase, 1)}:${net.port}`]);
    const w = await workers();
    assert.deepEqual(Object.keys(w).sort(), [net.ipBase, ipv4Add(net.ipBase, 1)].sort());
  });

  test('a separately started worker attaches, serves its actor, and is marked dead when killed', async () => {
    worker = await startComponent('worker', ['--apiserver', stub.addresses.grpc!, '--advertise-ip', externalIp, '--worker-port', String(net.port)]);
    assert.equal(worker.addresses.http, `${externalIp}:${net.port}`);
    await eventually(async () => ((await workers())[externalIp]?.alive ? true : undefined), 5000, 'worker attached');

    // Leave the external worker as the only free one.
    for (const ip of [net.ipBase, ipv4Add(net.ipBase, 1)]) assert.equal((await admin(stub.addresses.admin!, 'POST', `/workers/${ip}/stop`)).status, 200);
    const resumed = await client.resume('actor-001');
    assert.ok(resumed.ok, resumed.ok ? '' : resumed.details);
    assert.equal(resumed.value.actor.ateom_pod_ip, externalIp);

    const res = await workerRequest({ ip: externalIp, port: net.port, host: actorHost('actor-001'), headers: { 'x-request-id': 'ext-1' } });
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body) as { worker: string; actor: string; requestId: string };
    assert.equal(body.worker, externalIp);
    assert.equal(body.actor, 'actor-001');
    const stale = await workerRequest({ ip: externalIp, port: net.port, host: actorHost('actor-002') });
    assert.equal(stale.status, 421);
    assert.equal(stale.headers['x-ate-assignment-stale'], 'true');
    const view = await admin<{ requestIds: string[] }>(stub.addresses.admin!, 'GET', '/actors/demo/actor-001');
    assert.deepEqual(view.body.requestIds, ['ext-1']);
    assert.equal((await workers())[externalIp]?.requests, 1);

    await worker.kill();
    const dead = await eventually(async () => {
      const w = (await workers())[externalIp];
      return w && !w.alive ? w : undefined;
    }, 5000, 'worker marked dead');
    assert.equal(dead.attached, false);
    assert.deepEqual(dead.actors, []);
    const actor = await admin<{ status: string; workerIp: string | null }>(stub.addresses.admin!, 'GET', '/actors/demo/actor-001');
    assert.equal(actor.body.status, 'SUSPENDED');
    assert.equal(actor.body.workerIp, null);
    const rpc = (await admin<{ rpc: Record<string, Record<string, number>> }>(stub.addresses.admin!, 'GET', '/stats')).body.rpc;
    assert.equal(rpc.Attach ? Object.values(rpc.Attach).reduce((a, b) => a + b, 0) : 0, 1, 'the ended Attach stream is counted (the in-process workers are still attached)');
  });

  test('SIGTERM stops the stub cleanly', async () => {
    const code = await stub.stop();
    assert.equal(code, 0);
    assert.ok(stub.logs().some((l) => l.msg === 'shutting down'));
  });
});

test('--help documents every flag and its environment variable', () => {
  const stubHelp = spawnSync(process.execPath, [CLI, 'apiserver-stub', '--help'], { encoding: 'utf8' });
  assert.equal(stubHelp.status, 0);
  for (const env of ['APISERVER_LISTEN', 'APISERVER_ADMIN', 'APISERVER_WORKERS', 'WORKER_IP_BASE', 'WORKER_PORT', 'WORKER_CAPACITY', 'APISERVER_ACTORS', 'APISERVER_ATESPACE', 'APISERVER_RESOLVE_LATENCY_MS', 'APISERVER_COLD_RESUME_MS', 'APISERVER_AUTO_CREATE', 'ACTOR_SUFFIX']) {
    assert.match(stubHelp.stdout, new RegExp(`\\[${env}[;\\]]`), env);
  }
  const workerHelp = spawnSync(process.execPath, [CLI, 'worker', '--help'], { encoding: 'utf8' });
  assert.equal(workerHelp.status, 0);
  for (const env of ['WORKER_APISERVER', 'WORKER_ADVERTISE_IP', 'WORKER_LISTEN_IP', 'WORKER_PORT', 'WORKER_CAPACITY', 'ACTOR_SUFFIX']) {
    assert.match(workerHelp.stdout, new RegExp(`\\[${env}[;\\]]`), env);
  }
  const missing = spawnSync(process.execPath, [CLI, 'worker'], { encoding: 'utf8', env: { ...process.env, WORKER_ADVERTISE_IP: '' } });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--advertise-ip/);
});
