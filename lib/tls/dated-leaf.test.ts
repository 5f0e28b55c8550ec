import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DevCa } from './dev-ca.js';
import { signDatedLeaf, x509Time, type CaFiles } from './dated-leaf.js';

const run = promisify(execFile);

describe('dated leaf certificates', () => {
  let dir = '';
  let ca: CaFiles;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dated-leaf-'));
    const created = await DevCa.create(dir, { name: 'ca' });
    ca = { certFile: created.certFile, keyFile: path.join(dir, 'ca.key') };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('x509Time: UTCTime (YYMMDDHHMMSSZ) from 1950 to 2049, GeneralizedTime outside, cut to the second', () => {
    assert.deepEqual(x509Time(Date.UTC(2026, 0, 2, 3, 4, 5, 999)), Buffer.concat([Buffer.from([0x17, 13]), Buffer.from('260102030405Z')]));
    assert.deepEqual(x509Time(Date.UTC(2049, 11, 31, 23, 59, 59)), Buffer.concat([Buffer.from([0x17, 13]), Buffer.from('491231235959Z')]));
    assert.deepEqual(x509Time(Date.UTC(2050, 0, 1)), Buffer.concat([Buffer.from([0x18, 15]), Buffer.from('20500101000000Z')]));
    assert.deepEqual(x509Time(Date.UTC(1949, 11, 31, 23, 59, 59)), Buffer.concat([Buffer.from([0x18, 15]), Buffer.from('19491231235959Z')]));
    assert.throws(() => x509Time(Number.NaN), /not a time/);
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

  /** openssl's reading of a certificate: `verify` against the CA (with the purpose asked) and its text form. */
  async function opensslReads(certPem: string, caFile: string, purpose: 'sslclient' | 'sslserver'): Promise<{ verified: boolean; text: string }> {
    const file = path.join(dir, `read-${Math.random().toString(16).slice(2)}.pem`);
    await writeFile(file, certPem);
    try {
      const verify = await run('openssl', ['verify', '-CAfile', caFile, '-purpose', purpose, file]).then((r) => r.stdout, (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`);
      const { stdout: text } = await run('openssl', ['x509', '-in', file, '-noout', '-text']);
      return { verified: /: OK$/m.test(verify), text };
    } finally {
      await rm(file, { force: true });
    }
  }

  test('openssl verifies what signDatedLeaf signs for its purpose and reads every field back', async () => {
    const now = Date.now();
    const leaf = await signDatedLeaf(ca, { commonName: 'actor-7', uris: ['spiffe://x.test/ateom-for-actor/demo/actor-7'], notBeforeMs: now - 60_000, notAfterMs: now + 3_600_000, extendedKeyUsage: ['clientAuth', 'serverAuth'] });
    const read = await opensslReads(leaf.certPem, ca.certFile, 'sslclient');
    assert.ok(read.verified, read.text);
    assert.match(read.text, /Version: 3 \(0x2\)/);
    assert.match(read.text, /Subject: CN ?= ?actor-7/);
    assert.match(read.text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
    assert.match(read.text, /X509v3 Key Usage: critical\s+Digital Signature\n/);
    assert.match(read.text, /X509v3 Extended Key Usage: \s+TLS Web Client Authentication, TLS Web Server Authentication/);
    assert.match(read.text, /URI:spiffe:\/\/x\.test\/ateom-for-actor\/demo\/actor-7/);
    const serverOnly = await signDatedLeaf(ca, { commonName: 'leaf', uris: [], notBeforeMs: now - 60_000, notAfterMs: now + 60_000, extendedKeyUsage: ['serverAuth'] });
    assert.ok(!(await opensslReads(serverOnly.certPem, ca.certFile, 'sslclient')).verified, 'serverAuth only is no client certificate');
    assert.ok((await opensslReads(serverOnly.certPem, ca.certFile, 'sslserver')).verified);
    const subCa = await signDatedLeaf(ca, { commonName: 'sub', uris: [], notBeforeMs: now - 60_000, notAfterMs: now + 60_000, extendedKeyUsage: [], ca: true });
    assert.match((await opensslReads(subCa.certPem, ca.certFile, 'sslclient')).text, /CA:TRUE[\s\S]*Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
  });

  test('a CA key of another kind (P-384, RSA, Ed25519) signs too; a key that is not the CA certificate\'s, or a missing file, is refused', async () => {
    const now = Date.now();
    const spec = { commonName: 'leaf', uris: ['spiffe://x.test/a'], notBeforeMs: now - 60_000, notAfterMs: now + 60_000, extendedKeyUsage: ['clientAuth' as const] };
    for (const [name, kind] of [['p384', 'secp384r1'], ['rsa', 'rsa'], ['ed', 'ed25519']] as const) {
      const keyFile = path.join(dir, `${name}.key`);
      const { privateKey } = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : kind === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: kind });
      await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const certFile = path.join(dir, `${name}.pem`);
      await run('openssl', ['req', '-x509', '-new', '-key', keyFile, '-days', '1', '-subj', `/CN=${name} CA`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-out', certFile]);
      const leaf = await signDatedLeaf({ certFile, keyFile }, spec);
      const cert = new X509Certificate(leaf.certPem);
      assert.equal(cert.issuer, `CN=${name} CA`, name);
      assert.ok(cert.verify(new X509Certificate(await readFile(certFile)).publicKey), name);
      assert.ok((await opensslReads(leaf.certPem, certFile, 'sslclient')).verified, name);
    }
    await assert.rejects(signDatedLeaf({ certFile: ca.certFile, keyFile: path.join(dir, 'p384.key') }, spec), /is not the key of/);
    await assert.rejects(signDatedLeaf({ certFile: ca.certFile, keyFile: path.join(dir, 'missing.key') }, spec), /ENOENT/);
  });
});
