/**
 * A fresh EC P-256 key and a certificate signing request for it (PKCS#10, subject CN only, no attributes, signed
 * ecdsa-with-SHA256), made in-process with node:crypto: what `openssl req -newkey` makes, without a process. The
 * CA that signs it decides every extension.
 */
import { generateKeyPair, sign } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/** One DER element: tag, definite length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  if (n > 0xffff) throw new Error('DER element too long');
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

const sequence = (...items: Buffer[]): Buffer => der(0x30, ...items);

/** An OBJECT IDENTIFIER from its dotted form (arcs below 2^32). */
function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const chunk = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

const COMMON_NAME_OID = '2.5.4.3';
const ECDSA_WITH_SHA256_OID = '1.2.840.10045.4.3.2';

export interface KeyAndCsr {
  /** The private key, PKCS#8 PEM. */
  readonly keyPem: string;
  /** The request, PEM (`CERTIFICATE REQUEST`). */
  readonly csrPem: string;
}

/** A new P-256 key and a CSR for `CN=<commonName>` signed with it. */
export async function newKeyAndCsr(commonName: string): Promise<KeyAndCsr> {
  const { publicKey, privateKey } = await generate('ec', { namedCurve: 'prime256v1' });
  const subject = sequence(der(0x31, sequence(oid(COMMON_NAME_OID), der(0x0c, Buffer.from(commonName, 'utf8')))));
  const version = der(0x02, Buffer.from([0]));
  const attributes = der(0xa0);
  const info = sequence(version, subject, publicKey.export({ type: 'spki', format: 'der' }), attributes);
  const signature = sign('sha256', info, { key: privateKey, dsaEncoding: 'der' });
  const request = sequence(info, sequence(oid(ECDSA_WITH_SHA256_OID)), der(0x03, Buffer.from([0]), signature));
  const base64 = request.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return Object.freeze({
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    csrPem: `-----BEGIN CERTIFICATE REQUEST-----\n${base64}\n-----END CERTIFICATE REQUEST-----\n`,
  });
}
