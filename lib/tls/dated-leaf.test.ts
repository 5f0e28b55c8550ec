import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DevCa } from './dev-ca.js';
import { opensslTime, signDatedLeaf, type CaFiles } from './dated-leaf.js';

let dir = '';
let ca: CaFiles;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dated-leaf-'));
  const created = await DevCa.create(dir, { name: 'ca' });
  ca = { certFile: created.certFile, keyFile: path.join(dir, 'ca.key') };
});
after(() => rm(dir, { recursive: true, force: true }));

test('opensslTime: the UTC instant cut to the second, as YYYYMMDDHHMMSSZ', () => {
  assert.equal(opensslTime(Date.UTC(2026, 0, 2, 3, 4, 5, 999)), '20260102030405Z');
  assert.equal(opensslTime(Date.UTC(2049, 11, 31, 23, 59, 59)), '20491231235959Z');
  assert.throws(() => opensslTime(Number.NaN), /not a time/);
});

test('signDatedLeaf: the exact validity window, the extensions asked for, a fresh key matching the certificate', async () => {
  const notBeforeMs = Date.UTC(2026, 2, 1, 10, 0, 0);
  const notAfterMs = notBeforeMs + 3_000;
  const a = await signDatedLeaf(ca, { commonName: 'leaf', uris: ['spiffe://x.test/a', 'spiffe://x.test/b'], notBeforeMs, notAfterMs, extendedKeyUsage: ['clientAuth'] });
  const b = await signDatedLeaf(ca, { commonName: 'leaf', uris: [], notBeforeMs, notAfterMs: notAfterMs + 500, extendedKeyUsage: [], ca: true });
  const certA = new X509Certificate(a.certPem);
  const certB = new X509Certificate(b.certPem);
  assert.equal(Date.parse(certA.validFrom), notBeforeMs);
  assert.equal(Date.parse(certA.validTo), notAfterMs);
  assert.equal(Date.parse(certB.validTo), notAfterMs, 'cut to the second');
  assert.equal(certA.subjectAltName, 'URI:spiffe://x.test/a, URI:spiffe://x.test/b');
  assert.deepEqual(certA.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.equal(certA.ca, false);
  assert.equal(certB.ca, true);
  assert.equal(certB.subjectAltName, undefined);
  assert.equal(certB.keyUsage, undefined, 'no EKU extension at all');
  const issuer = new X509Certificate(await readFile(ca.certFile));
  for (const cert of [certA, certB]) assert.ok(cert.checkIssued(issuer) && cert.verify(issuer.publicKey));
  assert.ok(certA.checkPrivateKey(createPrivateKey(a.keyPem)));
  assert.ok(!certA.checkPrivateKey(createPrivateKey(b.keyPem)), 'each call makes its own key');
  assert.notEqual(certA.serialNumber, certB.serialNumber);
});

test('signDatedLeaf refuses what it cannot write safely, and an empty window', async () => {
  const base = { commonName: 'leaf', uris: [] as string[], notBeforeMs: 0, notAfterMs: 1_000, extendedKeyUsage: [] };
  await assert.rejects(signDatedLeaf(ca, { ...base, commonName: 'a/CN=b' }), /common name/);
  for (const uri of ['spiffe://x/a,URI:spiffe://x/b', 'spiffe://x/$HOME', 'spiffe://x/a b', 'spiffe://x/\n']) {
    await assert.rejects(signDatedLeaf(ca, { ...base, uris: [uri] }), /cannot be written as a URI SAN/, uri);
  }
  await assert.rejects(signDatedLeaf(ca, { ...base, notAfterMs: 0 }), /start before it ends/);
});

test('signDatedLeaf leaves nothing behind in the temporary directory, whether it signs or fails', async () => {
  const tmp = await mkdtemp(path.join(dir, 'tmp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    const spec = { commonName: 'leaf', uris: [], notBeforeMs: Date.now(), notAfterMs: Date.now() + 60_000, extendedKeyUsage: [] };
    await signDatedLeaf(ca, spec);
    await assert.rejects(signDatedLeaf({ certFile: ca.certFile, keyFile: path.join(dir, 'missing.key') }, spec), /openssl ca failed/);
    assert.deepEqual(await readdir(tmp), []);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
});
