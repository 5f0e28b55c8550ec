/**
 * The serving certificate of the TLS arms' proxy (--tls-listen): one bundle (certificate then key) for
 * `localhost`, issued by a throw-away development CA in a private temporary directory, given as both --tls-cert
 * and --tls-key. h2load does not verify it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DevCa } from '../lib/tls/dev-ca.js';

export interface IngressCertificate {
  readonly bundle: string;
  remove(): Promise<void>;
}

export async function writeIngressCertificate(): Promise<IngressCertificate> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-bench-ingress-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const ca = await DevCa.create(dir, { days: 1 });
    const bundle = await ca.issue({ name: 'ingress', commonName: 'localhost', dnsNames: ['localhost'], usage: 'server', days: 1 });
    return { bundle, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** The proxy flags of an HTTPS listener on a free loopback port with `cert`. */
export function ingressTlsArgs(cert: IngressCertificate): string[] {
  return ['--tls-listen', '127.0.0.1:0', '--tls-cert', cert.bundle, '--tls-key', cert.bundle];
}
