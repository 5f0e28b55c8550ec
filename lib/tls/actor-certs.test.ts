import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkActorCertificate } from '../egress/actor-certificate.js';
import { ACTOR_CERT_BACKDATE_MS, actorCaFiles, createActorCa, DEFAULT_ACTOR_CERT_LIFETIME_MS, mintActorCertificate } from './actor-certs.js';

let dir = '';
let caCert: X509Certificate;
describe('actor-certs', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'actor-certs-'));
    await createActorCa(dir);
    caCert = new X509Certificate(await readFile(actorCaFiles(dir).certFile));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** The certificate of a bundle, and whether the actor CA signed it (what the TLS layer would decide). */
  function presented(certPem: string): { leaf: X509Certificate; authorized: boolean } {
    const leaf = new X509Certificate(certPem);
    return { leaf, authorized: leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey) };
  }

  test('createActorCa writes actor-ca.pem and actor-ca.key: a CA of its own', async () => {
    assert.equal(path.basename(actorCaFiles(dir).certFile), 'actor-ca.pem');
    assert.equal(path.basename(actorCaFiles(dir).keyFile), 'actor-ca.key');
    assert.equal(caCert.ca, true);
    assert.ok(caCert.checkPrivateKey(createPrivateKey(await readFile(actorCaFiles(dir).keyFile))));
  });

  test('mintActorCertificate: one URI SAN, ClientAuth + ServerAuth, NotBefore 5 minutes back, NotAfter one hour on, signed by the actor CA', async () => {
    const before = Date.now();
    const minted = await mintActorCertificate(dir, { atespace: 'team-a', name: 'agent-1' });
    const after = Date.now();
    const cert = new X509Certificate(minted.certPem);
    assert.equal(minted.bundle, minted.certPem + minted.keyPem);
    assert.equal(cert.subjectAltName, 'URI:spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1');
    assert.deepEqual([...(cert.keyUsage ?? [])].sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    assert.equal(cert.ca, false);
    const notBefore = Date.parse(cert.validFrom);
    const notAfter = Date.parse(cert.validTo);
    // Seconds: the certificate's times are cut to the second.
    assert.ok(notBefore > before - ACTOR_CERT_BACKDATE_MS - 1_000 && notBefore <= after - ACTOR_CERT_BACKDATE_MS, cert.validFrom);
    assert.ok(notAfter > before + DEFAULT_ACTOR_CERT_LIFETIME_MS - 1_000 && notAfter <= after + DEFAULT_ACTOR_CERT_LIFETIME_MS, cert.validTo);
    assert.equal(minted.notAfterMs, notAfter);
    assert.ok(cert.checkPrivateKey(createPrivateKey(minted.keyPem)));
    const check = checkActorCertificate(presented(minted.certPem), after);
    assert.equal(check.kind, 'actor');
    assert.deepEqual(check.kind === 'actor' ? check.actor : undefined, { atespace: 'team-a', name: 'agent-1' });
  });

  test('every mint is a fresh key and a new certificate for the same actor', async (t) => {
    const count = 10;
    const started = performance.now();
    const minted = [];
    for (let i = 0; i < count; i++) minted.push(await mintActorCertificate(dir, { atespace: 'team-a', name: 'agent-1' }));
    t.diagnostic(`${((performance.now() - started) / count).toFixed(1)} ms per certificate (one after another)`);
    assert.equal(new Set(minted.map((m) => m.keyPem)).size, count);
    assert.equal(new Set(minted.map((m) => new X509Certificate(m.certPem).serialNumber)).size, count);
    const digests = minted.map((m) => {
      const check = checkActorCertificate(presented(m.certPem), Date.now());
      assert.equal(check.kind, 'actor');
      return check.kind === 'actor' ? check.digest : '';
    });
    assert.equal(new Set(digests).size, count, 'each activation has its own cache key');
  });

  test('a short lifetime: a 3-second certificate is refused as expired once its NotAfter has passed', async () => {
    const before = Date.now();
    const minted = await mintActorCertificate(dir, { atespace: 'team-a', name: 'agent-1', lifetimeMs: 3_000 });
    assert.ok(minted.notAfterMs <= Date.now() + 3_000 && minted.notAfterMs > before + 1_000, String(minted.notAfterMs - before));
    assert.equal(checkActorCertificate(presented(minted.certPem), minted.notAfterMs).kind, 'actor');
    const late = checkActorCertificate(presented(minted.certPem), minted.notAfterMs + 1);
    assert.equal(late.kind === 'refused' ? late.reason : late.kind, 'expired');
  });

  test('mintActorCertificate refuses invalid names, a bad lifetime and a directory without the actor CA', async () => {
    await assert.rejects(mintActorCertificate(dir, { atespace: 'Team_A', name: 'agent-1' }), /"Team_A" is not a valid atespace name/);
    await assert.rejects(mintActorCertificate(dir, { atespace: 'team-a', name: 'a'.repeat(64) }), /is not a valid actor name/);
    await assert.rejects(mintActorCertificate(dir, { atespace: 'team-a', name: 'a/b' }), /is not a valid actor name/);
    for (const lifetimeMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await assert.rejects(mintActorCertificate(dir, { atespace: 'team-a', name: 'agent-1', lifetimeMs }), /expected a positive number/, String(lifetimeMs));
    }
    await assert.rejects(mintActorCertificate(path.join(dir, 'nowhere'), { atespace: 'team-a', name: 'agent-1' }), /holds no actor identity CA/);
  });
});
