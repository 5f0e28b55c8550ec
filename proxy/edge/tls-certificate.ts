/**
 * The HTTPS listener's serving certificate: a PEM certificate chain and its private key, read from files. A pair
 * that cannot be read or does not form a usable secure context is refused with a message naming the file and the
 * reason (`TlsCertificateError`); at start that is a start-up error, at a reload the old certificate stays.
 */
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { UsageError } from '../../lib/flags.js';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The flags that name the files, for the messages (default `--tls-cert`, `--tls-key`). */
  readonly flags?: { readonly cert: string; readonly key: string };
}

/** The files' bytes and the secure context built from them. */
export interface LoadedCertificate {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly context: tls.SecureContext;
}

/** A configuration problem: at start, `actor-edge` reports it as a usage error. */
export class TlsCertificateError extends UsageError {
}

/** TLS 1.2 is the oldest version the listener accepts. */
export const TLS_MIN_VERSION = 'TLSv1.2';

function read(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new TlsCertificateError(`${flag} ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Reads both files and builds the secure context; throws `TlsCertificateError`. */
export function loadCertificate(files: TlsFiles): LoadedCertificate {
  const flags = files.flags ?? { cert: '--tls-cert', key: '--tls-key' };
  const cert = read(files.certFile, flags.cert);
  const key = read(files.keyFile, flags.key);
  try {
    return { cert, key, context: tls.createSecureContext({ cert, key, minVersion: TLS_MIN_VERSION }) };
  } catch (err) {
    throw new TlsCertificateError(`${flags.cert} ${files.certFile} / ${flags.key} ${files.keyFile}: not a usable certificate and key (${(err as Error).message})`);
  }
}

/** True when the files hold the same bytes as `loaded` (nothing to reload). */
export function sameCertificate(a: LoadedCertificate, b: { readonly cert: Buffer; readonly key: Buffer }): boolean {
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}
