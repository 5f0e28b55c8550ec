import { test } from 'node:test';
import assert from 'node:assert/strict';
import { certificateSubject, childrenOf, der, oid, readElement, sequence, unsignedInteger } from './der.js';

test('INTEGER in its shortest form: leading zero octets dropped, one 0x00 kept before a high bit', () => {
  assert.deepEqual(unsignedInteger(Buffer.from([0, 0, 5])), Buffer.from([2, 1, 5]));
  assert.deepEqual(unsignedInteger(Buffer.from([0x80])), Buffer.from([2, 2, 0, 0x80]));
  assert.deepEqual(unsignedInteger(Buffer.from([0, 0])), Buffer.from([2, 1, 0]));
});

test('OBJECT IDENTIFIER and lengths as DER writes them', () => {
  assert.deepEqual(oid('1.2.840.10045.4.3.2'), Buffer.from('06082a8648ce3d040302', 'hex'));
  assert.deepEqual(oid('2.5.29.17'), Buffer.from('0603551d11', 'hex'));
  assert.throws(() => oid('1'), /not an object identifier/);
  assert.deepEqual(der(0x04, Buffer.alloc(0x80)).subarray(0, 3), Buffer.from([0x04, 0x81, 0x80]));
  assert.deepEqual(der(0x04, Buffer.alloc(0x100)).subarray(0, 4), Buffer.from([0x04, 0x82, 0x01, 0x00]));
  assert.throws(() => der(0x04, Buffer.alloc(0x10000)), /too long/);
});

test('reading: what is written reads back; a truncated element or one past its container is refused', () => {
  const written = sequence(der(0x02, Buffer.from([1])), der(0x04, Buffer.alloc(200)));
  const outer = readElement(written);
  assert.deepEqual(childrenOf(written, outer).map((c) => [c.tag, c.end - c.contentStart]), [[0x02, 1], [0x04, 200]]);
  assert.throws(() => readElement(written.subarray(0, written.length - 1)), /past its container/);
  assert.throws(() => readElement(Buffer.from([0x30])), /truncated/);
  assert.throws(() => childrenOf(Buffer.from([0x30, 0x03, 0x04, 0x05, 0x00]), readElement(Buffer.from([0x30, 0x03, 0x04, 0x05, 0x00]))), /past its container/);
});

test("a certificate's subject: the sixth field of its TBSCertificate, or the fifth without a version", () => {
  const name = (cn: string): Buffer => sequence(der(0x31, sequence(oid('2.5.4.3'), der(0x0c, Buffer.from(cn)))));
  const fields = [der(0x02, Buffer.from([7])), sequence(oid('1.2.840.10045.4.3.2')), name('issuer'), sequence(), name('subject'), sequence()];
  const v3 = sequence(sequence(der(0xa0, der(0x02, Buffer.from([2]))), ...fields), sequence(), der(0x03, Buffer.from([0])));
  const v1 = sequence(sequence(...fields), sequence(), der(0x03, Buffer.from([0])));
  assert.deepEqual(certificateSubject(v3), name('subject'));
  assert.deepEqual(certificateSubject(v1), name('subject'));
  assert.throws(() => certificateSubject(sequence(sequence(...fields.slice(0, 4)))), /without a subject/);
  assert.throws(() => certificateSubject(der(0x04, Buffer.from([1]))), /not a certificate/);
});
