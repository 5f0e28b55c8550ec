/**
 * A development certificate authority built with the system's `openssl` (EC P-256 keys, SHA-256): a CA, and
 * certificates it signs, each written as one credential bundle (certificate then private key, mode 0600) — the
 * form every component reads. For local stacks and tests only: production identities come from the platform.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { openssl } from './openssl.js';

export interface LeafSpec {
  /** File name without `.pem`. */
  readonly name: string;
  readonly commonName: string;
  readonly uris?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ips?: readonly string[];
  /** Validity in days from now; a negative number makes a certificate that has already expired. */
  readonly days?: number;
  readonly usage: 'client' | 'server' | 'client-and-server';
}

const EKU: Readonly<Record<LeafSpec['usage'], string>> = {
  client: 'clientAuth',
  server: 'serverAuth',
  'client-and-server': 'serverAuth,clientAuth',
};

function extensions(spec: LeafSpec): string {
  const sans = [
    ...(spec.uris ?? []).map((u) => `URI:${u}`),
    ...(spec.dnsNames ?? []).map((d) => `DNS:${d}`),
    ...(spec.ips ?? []).map((i) => `IP:${i}`),
  ];
  return [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    `extendedKeyUsage=${EKU[spec.usage]}`,
    ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
  ].join('\n') + '\n';
}

export class DevCa {
  private constructor(
    readonly dir: string,
    readonly certFile: string,
    private readonly keyFile: string,
  ) {}

  /** A CA valid for `days` (default 365) written to `dir/<name>.pem` (certificate) and `dir/<name>.key`. */
  static async create(dir: string, opts: { readonly name?: string; readonly commonName?: string; readonly days?: number } = {}): Promise<DevCa> {
    await mkdir(dir, { recursive: true });
    const name = opts.name ?? 'ca';
    const keyFile = path.join(dir, `${name}.key`);
    const certFile = path.join(dir, `${name}.pem`);
    await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', keyFile]);
    await chmod(keyFile, 0o600);
    await openssl([
      'req', '-x509', '-new', '-key', keyFile, '-sha256', '-days', String(opts.days ?? 365),
      '-subj', `/CN=${opts.commonName ?? 'actor-edge development CA'}`,
      '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      '-out', certFile,
    ]);
    return new DevCa(dir, certFile, keyFile);
  }

  /** The CA already written to `dir/<name>.pem` and `dir/<name>.key` (to issue more certificates). */
  static async open(dir: string, name = 'ca'): Promise<DevCa> {
    const certFile = path.join(dir, `${name}.pem`);
    const keyFile = path.join(dir, `${name}.key`);
    await Promise.all([readFile(certFile), readFile(keyFile)]); // both must exist
    return new DevCa(dir, certFile, keyFile);
  }

  /** Issues `spec` and writes its credential bundle to `dir/<name>.pem` (default: this CA's directory). */
  async issue(spec: LeafSpec, dir = this.dir): Promise<string> {
    await mkdir(dir, { recursive: true });
    const base = path.join(dir, spec.name);
    const key = `${base}.key.tmp`;
    const csr = `${base}.csr.tmp`;
    const ext = `${base}.ext.tmp`;
    const cert = `${base}.crt.tmp`;
    try {
      await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
      await openssl(['req', '-new', '-key', key, '-subj', `/CN=${spec.commonName}`, '-out', csr]);
      await writeFile(ext, extensions(spec));
      await openssl([
        'x509', '-req', '-in', csr, '-CA', this.certFile, '-CAkey', this.keyFile, '-sha256',
        '-set_serial', `0x${randomBytes(12).toString('hex')}`, '-days', String(spec.days ?? 30), '-extfile', ext, '-out', cert,
      ]);
      const bundle = `${base}.pem`;
      await writeFile(bundle, (await readFile(cert, 'utf8')) + (await readFile(key, 'utf8')), { mode: 0o600 });
      await chmod(bundle, 0o600);
      return bundle;
    } finally {
      await Promise.all([key, csr, ext, cert].map((f) => rm(f, { force: true })));
    }
  }
}
