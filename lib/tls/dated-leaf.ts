/**
 * Signs one certificate with a CA's files, valid from and to exact instants (to the second): what `openssl x509
 * -req` cannot do (it has only -days), so this runs `openssl ca` with a throwaway configuration, database and serial
 * in a private temporary directory that is removed afterwards. Each call makes a fresh EC P-256 key (in-process,
 * csr.ts), so one certificate costs one openssl process. Concurrent calls are independent.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newKeyAndCsr } from './csr.js';
import { openssl } from './openssl.js';

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
/** Printable ASCII without what the openssl configuration syntax gives a meaning to (`,` separates SANs, `$` expands). */
const URI_TEXT = /^[\x21-\x7e]+$/;
const CONFIG_SPECIAL = /[,$\\"']/;

/** `YYYYMMDDHHMMSSZ`, the instant in UTC cut to the second (openssl stores it as UTCTime up to 2049). */
export function opensslTime(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`not a time: ${ms}`);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:T]/g, '');
}

function configText(dir: string, spec: DatedLeafSpec): string {
  const extensions = [
    `basicConstraints = critical,CA:${spec.ca === true ? 'TRUE' : 'FALSE'}`,
    `keyUsage = critical,${spec.ca === true ? 'digitalSignature,keyCertSign,cRLSign' : 'digitalSignature'}`,
    ...(spec.extendedKeyUsage.length > 0 ? [`extendedKeyUsage = ${spec.extendedKeyUsage.join(',')}`] : []),
    ...(spec.uris.length > 0 ? [`subjectAltName = ${spec.uris.map((u) => `URI:${u}`).join(',')}`] : []),
  ];
  return [
    '[ca]',
    'default_ca = signer',
    '[signer]',
    `database = ${path.join(dir, 'index.txt')}`,
    `serial = ${path.join(dir, 'serial')}`,
    `new_certs_dir = ${dir}`,
    'default_md = sha256',
    'policy = any_subject',
    'unique_subject = no',
    'email_in_dn = no',
    'copy_extensions = none',
    '[any_subject]',
    'commonName = supplied',
    '[leaf]',
    ...extensions,
    '',
  ].join('\n');
}

function validate(spec: DatedLeafSpec): void {
  if (!COMMON_NAME.test(spec.commonName)) throw new Error(`"${spec.commonName}" cannot be a certificate's common name here`);
  for (const uri of spec.uris) {
    if (!URI_TEXT.test(uri) || CONFIG_SPECIAL.test(uri)) throw new Error(`"${uri}" cannot be written as a URI SAN here`);
  }
  if (!(spec.notBeforeMs < spec.notAfterMs)) throw new Error('a certificate must start before it ends');
}

/** Signs `spec` with `ca`: a new key and its certificate. */
export async function signDatedLeaf(ca: CaFiles, spec: DatedLeafSpec): Promise<SignedLeaf> {
  validate(spec);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-sign-'));
  try {
    const file = (name: string): string => path.join(dir, name);
    // A random positive 127-bit serial (RFC 5280: at most 20 octets, unpredictable).
    const serial = randomBytes(16);
    serial[0] = (serial[0] as number) & 0x7f;
    const { keyPem, csrPem } = await newKeyAndCsr(spec.commonName);
    await Promise.all([
      writeFile(file('openssl.cnf'), configText(dir, spec)),
      writeFile(file('index.txt'), ''),
      writeFile(file('serial'), `${serial.toString('hex')}\n`),
      writeFile(file('leaf.csr'), csrPem),
    ]);
    await openssl([
      'ca', '-batch', '-notext', '-config', file('openssl.cnf'), '-cert', ca.certFile, '-keyfile', ca.keyFile,
      '-in', file('leaf.csr'), '-out', file('leaf.pem'), '-extensions', 'leaf',
      '-startdate', opensslTime(spec.notBeforeMs), '-enddate', opensslTime(spec.notAfterMs),
    ]);
    const certPem = await readFile(file('leaf.pem'), 'utf8');
    return Object.freeze({ certPem, keyPem });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
