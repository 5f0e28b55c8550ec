import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { workersClientConstructor, type ControlToWorker, type WorkerToControl, type WorkersClient } from './atestub-types.js';
import { eventually } from '../lib/testing/wait.js';
import { admin } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

/** A hand-driven worker: the raw Attach stream, its received operations, and how it ended. */
class RawWorker {
  readonly stream: grpc.ClientDuplexStream<WorkerToControl, ControlToWorker>;
  readonly received: ControlToWorker[] = [];
  readonly ended: Promise<grpc.status>;
  private waiters: (() => void)[] = [];

  constructor(client: WorkersClient) {
    this.stream = client.Attach();
    this.stream.on('data', (m: ControlToWorker) => {
      if (m.op === 'flush') {
        this.stream.write({ ack: { op_id: m.op_id, error: '', seq: 0 } });
        return;
      }
      this.received.push(m);
      for (const w of this.waiters.splice(0)) w();
    });
    this.ended = new Promise((resolve) => {
      this.stream.on('error', (e: grpc.ServiceError) => resolve(e.code));
      this.stream.on('status', (s: grpc.StatusObject) => resolve(s.code));
    });
  }

  register(ip: string, capacity = 1): void {
    this.stream.write({ register: { ip, port: 8443, capacity } });
  }

  async next(op: string): Promise<ControlToWorker> {
    for (;;) {
      const found = this.received.find((m) => m.op === op);
      if (found) {
        this.received.splice(this.received.indexOf(found), 1);
        return found;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

describe('atestub.Workers/Attach', () => {
  let s: TestStub;
  let client: WorkersClient;
  before(async () => {
    s = await startTestStub({ workers: 0, actors: 4 });
    const Ctor = workersClientConstructor();
    client = new Ctor(s.stub.addresses.grpc, grpc.credentials.createInsecure()) as unknown as WorkersClient;
  });
  after(async () => {
    client.close();
    await s.close();
  });

  const workerStats = async (ip: string) =>
    (await admin<{ workers: Record<string, { alive: boolean; actors: string[] }> }>(s.admin, 'GET', '/stats')).body.workers[ip];

  test('the first message must be a valid registration', async () => {
    const noRegister = new RawWorker(client);
    noRegister.stream.write({ ack: { op_id: 1, error: '', seq: 0 } });
    assert.equal(await noRegister.ended, grpc.status.INVALID_ARGUMENT);
    const badIp = new RawWorker(client);
    badIp.register('not-an-ip');
    assert.equal(await badIp.ended, grpc.status.INVALID_ARGUMENT);
  });

  test('ResumeActor answers only after the worker acknowledged the activation', async () => {
    const w = new RawWorker(client);
    w.register('10.1.0.1');
    await w.next('registered');
    let settled = false;
    const resume = s.client.resume('actor-000').finally(() => (settled = true));
    const op = await w.next('activate');
    assert.ok(op.op === 'activate');
    assert.deepEqual({ atespace: op.activate.atespace, name: op.activate.name }, { atespace: 'demo', name: 'actor-000' });
    const view = await admin<{ status: string; workerIp: string }>(s.admin, 'GET', '/actors/demo/actor-000');
    assert.equal(view.body.status, 'RESUMING');
    assert.equal(settled, false, 'ResumeActor answered before the worker acknowledged');
    w.stream.write({ ack: { op_id: op.op_id, error: '', seq: 0 } });
    const r = await resume;
    assert.ok(r.ok);
    assert.equal(r.value.actor.ateom_pod_ip, '10.1.0.1');
    assert.equal(r.value.actor.status, 'STATUS_RUNNING');

    // The stream breaking kills the worker and suspends its actor.
    w.stream.cancel();
    await eventually(async () => ((await workerStats('10.1.0.1'))?.alive === false ? true : undefined), 5000, 'worker dead');
    const after = await admin<{ status: string; workerIp: string | null }>(s.admin, 'GET', '/actors/demo/actor-000');
    assert.deepEqual([after.body.status, after.body.workerIp], ['SUSPENDED', null]);
  });

  test('a refused activation fails the resume and leaves the actor SUSPENDED', async () => {
    const w = new RawWorker(client);
    w.register('10.1.0.2');
    await w.next('registered');
    const resume = s.client.resume('actor-001');
    const op = await w.next('activate');
    w.stream.write({ ack: { op_id: op.op_id, error: 'out of memory', seq: 0 } });
    const r = await resume;
    assert.ok(!r.ok);
    assert.match(r.details, /out of memory/);
    const view = await admin<{ status: string }>(s.admin, 'GET', '/actors/demo/actor-001');
    assert.equal(view.body.status, 'SUSPENDED');
    assert.deepEqual((await workerStats('10.1.0.2'))?.actors, []);
    w.stream.cancel();
  });

  test('a new registration for an IP replaces the old stream', async () => {
    const first = new RawWorker(client);
    first.register('10.1.0.3');
    await first.next('registered');
    const second = new RawWorker(client);
    second.register('10.1.0.3');
    await second.next('registered');
    assert.equal(await first.ended, grpc.status.ABORTED);
    assert.equal((await workerStats('10.1.0.3'))?.alive, true);
    second.stream.cancel();
  });
});
