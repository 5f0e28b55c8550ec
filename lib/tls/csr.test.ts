import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { newKeyAndCsr } from './csr.js';

const run = promisify(execFile);

/** openssl's reading of a CSR: it checks the signature (`-verify`) and prints the subject and the public key. */
async function opensslReads(csrPem: string): Promise<{ subject: string; publicKeyPem: string; verified: boolean }> {
  const child = run('openssl', ['req', '-verify', '-noout', '-subject', '-pubkey', '-nameopt', 'RFC2253']);
  child.child.stdin?.end(csrPem);
  const { stdout, stderr } = await child;
  const subject = /^subject=(.*)$/m.exec(stdout)?.[1] ?? '';
  const publicKeyPem = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----\n/.exec(stdout)?.[0] ?? '';
  return { subject, publicKeyPem, verified: /verify OK/i.test(stdout + stderr) };
}

test('newKeyAndCsr: openssl verifies the request, reads its subject, and its key is the one returned', async () => {
  const a = await newKeyAndCsr('agent-1');
  const b = await newKeyAndCsr('agent-1');
  const read = await opensslReads(a.csrPem);
  assert.ok(read.verified, 'the signature verifies');
  assert.equal(read.subject, 'CN=agent-1');
  const key = createPrivateKey(a.keyPem);
  assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.equal(createPublicKey(key).export({ type: 'spki', format: 'pem' }), read.publicKeyPem);
  assert.notEqual(a.keyPem, b.keyPem, 'a fresh key each time');
});

test('generated common names of every length up to 64 make requests openssl verifies and reads back', async () => {
  const names = fc.sample(fc.stringMatching(/^[A-Za-z0-9 ._:-]{1,64}$/).filter((s) => s.trim() === s && !s.startsWith(' ')), { seed: 4545, numRuns: 12 });
  for (const name of [...names, 'x'.repeat(64)]) {
    const read = await opensslReads((await newKeyAndCsr(name)).csrPem);
    assert.ok(read.verified, name);
    assert.equal(read.subject, `CN=${name.replace(/([,+"\\<>;=#])/g, '\\$1')}`, name);
  }
});
