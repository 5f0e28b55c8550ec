/**
 * Signs one certificate with a CA's files, valid from and to exact instants (to the second), in-process with
 * node:crypto: the TBSCertificate is written in DER (der.ts) and signed with the CA's key, so no openssl process or
 * temporary file is involved (the components' images have no openssl, and the stub mints actor certificates in
 * them). Each call makes a fresh EC P-256 key. The CA key may be EC (P-256, P-384, P-521), RSA or Ed25519.
 */
import { X509Certificate, createPrivateKey, generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { BOOLEAN_TRUE, NULL, bitString, certificateSubject, der, octetString, oid, sequence, set, unsignedInteger, utf8String } from './der.js';

const generate = promisify(generateKeyPair);

/** A CA's certificate and private key files (PEM). */
export interface CaFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export type ExtendedKeyUsage = 'clientAuth' | 'serverAuth';

export interface DatedLeafSpec {
  /** The subject's CN: letters, digits, space, `.`, `_`, `:` and `-`. */
  readonly commonName: string;
  /** URI subject alternative names, in order (none: no SAN extension). */
  readonly uris: readonly string[];
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  /** The extended key usages (none: no EKU extension at all). */
  readonly extendedKeyUsage: readonly ExtendedKeyUsage[];
  /** A CA certificate (basicConstraints CA:TRUE, keyCertSign) rather than an end entity's. */
  readonly ca?: boolean;
}

export interface SignedLeaf {
  readonly certPem: string;
  /** The fresh private key, PKCS#8 PEM. */
  readonly keyPem: string;
}

const COMMON_NAME = /^[A-Za-z0-9 ._:-]{1,64}$/;
/** Printable ASCII (an IA5String), without `,` `$` `\` or quotes: characters no actor URI needs and tools read specially. */
const URI_TEXT = /^[\x21-\x7e]+$/;
const SPECIAL = /[,$\\"']/;

const OIDS = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extendedKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** An X.509 Time: UTCTime for 1950–2049 (RFC 5280), GeneralizedTime otherwise; the instant in UTC cut to the second. */
export function x509Time(ms: number): Buffer {
  if (!Number.isFinite(ms)) throw new Error(`not a time: ${ms}`);
  const date = new Date(ms);
  const full = date.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:T]/g, '');
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new Error(`not a certificate time: ${date.toISOString()}`);
  return year >= 1950 && year <= 2049 ? der(0x17, Buffer.from(full.slice(2), 'latin1')) : der(0x18, Buffer.from(full, 'latin1'));
}

function validate(spec: DatedLeafSpec): void {
  if (!COMMON_NAME.test(spec.commonName)) throw new Error(`"${spec.commonName}" cannot be a certificate's common name here`);
  for (const uri of spec.uris) {
    if (!URI_TEXT.test(uri) || SPECIAL.test(uri)) throw new Error(`"${uri}" cannot be written as a URI SAN here`);
  }
  if (!(spec.notBeforeMs < spec.notAfterMs)) throw new Error('a certificate must start before it ends');
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [BOOLEAN_TRUE] : []), octetString(value));
}

function extensions(spec: DatedLeafSpec): Buffer[] {
  const isCa = spec.ca === true;
  // keyUsage bits: digitalSignature (0), and for a CA keyCertSign (5) and cRLSign (6); the unused low bits counted.
  const keyUsage = isCa ? der(0x03, Buffer.from([1, 0x86])) : der(0x03, Buffer.from([7, 0x80]));
  return [
    extension(OIDS.basicConstraints, true, isCa ? sequence(BOOLEAN_TRUE) : sequence()),
    extension(OIDS.keyUsage, true, keyUsage),
    ...(spec.extendedKeyUsage.length > 0 ? [extension(OIDS.extendedKeyUsage, false, sequence(...spec.extendedKeyUsage.map((u) => oid(OIDS[u]))))] : []),
    // GeneralName uniformResourceIdentifier: [6] IMPLICIT IA5String
    ...(spec.uris.length > 0 ? [extension(OIDS.subjectAltName, false, sequence(...spec.uris.map((u) => der(0x86, Buffer.from(u, 'latin1')))))] : []),
  ];
}

/** How the CA's key signs: the AlgorithmIdentifier a certificate names, and node:crypto's digest for it. */
function signatureAlgorithm(key: KeyObject): { readonly identifier: Buffer; readonly digest: string | null } {
  const type = key.asymmetricKeyType;
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const bits = curve === 'prime256v1' ? 256 : curve === 'secp384r1' ? 384 : curve === 'secp521r1' ? 512 : undefined;
    if (bits === undefined) throw new Error(`the CA's EC key is on curve ${curve ?? 'unknown'} (P-256, P-384 or P-521 expected)`);
    const ecdsaWith = { 256: '1.2.840.10045.4.3.2', 384: '1.2.840.10045.4.3.3', 512: '1.2.840.10045.4.3.4' }[bits];
    return { identifier: sequence(oid(ecdsaWith)), digest: `sha${bits}` };
  }
  if (type === 'rsa') return { identifier: sequence(oid('1.2.840.113549.1.1.11'), NULL), digest: 'sha256' };
  if (type === 'ed25519') return { identifier: sequence(oid('1.3.101.112')), digest: null };
  throw new Error(`the CA's key is of type ${type ?? 'unknown'} (EC, RSA or Ed25519 expected)`);
}

function pem(label: string, body: Buffer): string {
  return `-----BEGIN ${label}-----\n${body.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
}

/** Signs `spec` with `ca`: a new key and its certificate. */
export async function signDatedLeaf(ca: CaFiles, spec: DatedLeafSpec): Promise<SignedLeaf> {
  validate(spec);
  const [caCertPem, caKeyPem] = await Promise.all([readFile(ca.certFile), readFile(ca.keyFile)]);
  const caCert = new X509Certificate(caCertPem);
  const caKey = createPrivateKey(caKeyPem);
  if (!caCert.checkPrivateKey(caKey)) throw new Error(`${ca.keyFile} is not the key of ${ca.certFile}`);
  const algorithm = signatureAlgorithm(caKey);
  const { publicKey, privateKey } = await generate('ec', { namedCurve: 'prime256v1' });
  // A random positive serial of 16 octets (RFC 5280: at most 20, unpredictable); the top bits 01 keep it positive
  // and its encoding exactly 16 octets.
  const serial = randomBytes(16);
  serial[0] = ((serial[0] as number) & 0x3f) | 0x40;
  const tbs = sequence(
    der(0xa0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm.identifier,
    certificateSubject(caCert.raw),
    sequence(x509Time(spec.notBeforeMs), x509Time(spec.notAfterMs)),
    sequence(set(sequence(oid(OIDS.commonName), utf8String(spec.commonName)))),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(...extensions(spec))),
  );
  const signature = sign(algorithm.digest, tbs, algorithm.digest === null ? caKey : { key: caKey, dsaEncoding: 'der' });
  const certificate = sequence(tbs, algorithm.identifier, bitString(signature));
  return Object.freeze({ certPem: pem('CERTIFICATE', certificate), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string });
}
