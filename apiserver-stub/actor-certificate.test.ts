/**
 * `POST /actors/:atespace/:name/certificate`: the stub's actor identity CA (`--actor-ca-dir`) mints a certificate
 * for a running actor, checked here as the egress gateway checks one; every other case answers what it is.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkActorCertificate } from '../lib/egress/actor-certificate.js';
import { UsageError } from '../lib/flags.js';
import { actorCaFiles, createActorCa } from '../lib/tls/actor-certs.js';
import { admin } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

interface Minted {
  bundle: string;
  notAfter: string;
  notAfterMs: number;
}

let dir: string;
describe('actor-certificate', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-stub-actor-ca-'));
    await createActorCa(path.join(dir, 'ca'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('apiserver-stub actor certificates', () => {
    let s: TestStub;
    before(async () => {
      s = await startTestStub({ workers: 2, actors: 3, actorCaDir: path.join(dir, 'ca') });
    });
    after(async () => {
      await s.close();
    });

    test('a running actor gets a certificate from the actor identity CA, naming it, for an hour', async () => {
      assert.equal((await admin(s.admin, 'POST', '/actors/demo/actor-000/resume')).status, 200);
      const r = await admin<Minted>(s.admin, 'POST', '/actors/demo/actor-000/certificate');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const leaf = new X509Certificate(r.body.bundle);
      assert.ok(leaf.verify(new X509Certificate(await readFile(actorCaFiles(path.join(dir, 'ca')).certFile)).publicKey), 'signed by the actor identity CA');
      const check = checkActorCertificate({ leaf, authorized: true }, Date.now());
      assert.ok(check.kind === 'actor', JSON.stringify(check));
      assert.deepEqual(check.actor, { atespace: 'demo', name: 'actor-000' });
      assert.equal(check.notAfterMs, r.body.notAfterMs);
      assert.equal(new Date(r.body.notAfter).getTime(), r.body.notAfterMs);
      assert.match(r.body.bundle, /-----BEGIN (EC )?PRIVATE KEY-----/, 'the key comes with it');
      const hourFromNow = Date.now() + 60 * 60_000;
      assert.ok(Math.abs(r.body.notAfterMs - hourFromNow) < 5 * 60_000, 'about an hour');
      const again = await admin<Minted>(s.admin, 'POST', '/actors/demo/actor-000/certificate');
      assert.notEqual(again.body.bundle, r.body.bundle, 'a fresh key and certificate each time');
    });

    test('?format=pem answers the bundle alone, as a file curl can save; any other format is a 400', async () => {
      assert.equal((await admin(s.admin, 'POST', '/actors/demo/actor-000/resume')).status, 200);
      const r = await fetch(`http://${s.admin}/actors/demo/actor-000/certificate?format=pem`, { method: 'POST' });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^application\/x-pem-file/);
      const pem = await r.text();
      assert.match(pem, /^-----BEGIN CERTIFICATE-----/);
      assert.match(pem, /-----BEGIN (EC )?PRIVATE KEY-----/);
      const check = checkActorCertificate({ leaf: new X509Certificate(pem), authorized: true }, Date.now());
      assert.ok(check.kind === 'actor' && check.actor.name === 'actor-000', JSON.stringify(check));
      assert.equal((await fetch(`http://${s.admin}/actors/demo/actor-000/certificate?format=der`, { method: 'POST' })).status, 400);
    });

    test('lifetimeMs is honoured and checked', async () => {
      assert.equal((await admin(s.admin, 'POST', '/actors/demo/actor-001/resume')).status, 200);
      const short = await admin<Minted>(s.admin, 'POST', '/actors/demo/actor-001/certificate', { lifetimeMs: 60_000 });
      assert.equal(short.status, 200);
      assert.ok(short.body.notAfterMs < Date.now() + 5 * 60_000);
      for (const body of [{ lifetimeMs: 10 }, { lifetimeMs: 'long' }, { lifetimeMs: 1e12 }, { other: 1 }, [1]]) {
        const r = await admin<{ error: string }>(s.admin, 'POST', '/actors/demo/actor-001/certificate', body);
        assert.equal(r.status, 400, JSON.stringify(body));
      }
    });

    test('a suspended actor is 409, an unknown one 404', async () => {
      const suspended = await admin<{ error: string; code: string }>(s.admin, 'POST', '/actors/demo/actor-002/certificate');
      assert.equal(suspended.status, 409);
      assert.equal(suspended.body.error, 'actor "demo/actor-002" is SUSPENDED, not RUNNING');
      assert.equal((await admin(s.admin, 'POST', '/actors/demo/nobody/certificate')).status, 404);
      assert.equal((await admin(s.admin, 'POST', '/actors/demo/Bad_Name/certificate')).status, 400);
    });
  });

  describe('apiserver-stub without an actor identity CA', () => {
    test('the route answers 501; a --actor-ca-dir without the CA stops the start', async () => {
      const s = await startTestStub({ workers: 1, actors: 1 });
      try {
        assert.equal((await admin(s.admin, 'POST', '/actors/demo/actor-000/resume')).status, 200);
        const r = await admin<{ error: string; code: string }>(s.admin, 'POST', '/actors/demo/actor-000/certificate');
        assert.equal(r.status, 501);
        assert.equal(r.body.code, 'UNIMPLEMENTED');
      } finally {
        await s.close();
      }
      await assert.rejects(startTestStub({ workers: 0, actors: 1, actorCaDir: path.join(dir, 'empty') }), (err: unknown) => err instanceof UsageError && /--actor-ca-dir: .* holds no actor identity CA/.test(err.message));
    });
  });
});
