/**
 * `--attach-listen`: workers attach on their own gRPC port and the control API stays on `--listen` only, so a
 * deployment can keep workers off the network where the control API listens.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { workersClientConstructor, type WorkersClient } from './atestub-types.js';
import { admin, controlClient } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

let s: TestStub;

describe('attach-listen', () => {
  before(async () => {
    s = await startTestStub({ workers: 2, actors: 2, attachListen: { host: '127.0.0.1', port: 0 } });
  });

  after(async () => {
    await s?.close();
  });

  test('in-process workers attach on the attach port; ResumeActor works on the control port', async () => {
    assert.notEqual(s.stub.addresses.attach, s.stub.addresses.grpc);
    const workers = (await admin<{ workers: Record<string, { alive: boolean }> }>(s.admin, 'GET', '/stats')).body.workers;
    assert.deepEqual(Object.values(workers).map((w) => w.alive), [true, true]);
    const resumed = await s.client.resume('actor-000');
    assert.equal(resumed.ok, true, JSON.stringify(resumed));
  });

  test('the attach port does not serve ateapi.Control', async () => {
    const viaAttach = controlClient(s.stub.addresses.attach);
    try {
      const r = await viaAttach.resume('actor-001');
      assert.deepEqual(r.ok ? 'OK' : r.code, grpc.status.UNIMPLEMENTED);
    } finally {
      viaAttach.close();
    }
  });

  test('the control port does not serve atestub.Workers/Attach', async () => {
    const Ctor = workersClientConstructor();
    const client = new Ctor(s.stub.addresses.grpc, grpc.credentials.createInsecure()) as unknown as WorkersClient;
    try {
      const stream = client.Attach();
      const code = await new Promise<number>((resolve) => {
        stream.on('error', (err: grpc.ServiceError) => resolve(err.code));
        stream.on('data', () => resolve(-1));
        stream.write({ register: { ip: '127.0.0.9', port: 1, capacity: 1 } });
      });
      assert.equal(code, grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
    }
  });
});
