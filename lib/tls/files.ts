/**
 * Reading TLS files with errors that name the file, the flag and what is wrong with it. A start fails with one of
 * these; a rotation that meets one keeps the credentials it had and logs it.
 */
import { readFileSync } from 'node:fs';
import { parseCredentialBundle, parseTrustBundle, type CredentialBundle } from './pem.js';
import { UsageError } from '../flags.js';

export class TlsFileError extends Error {
  override readonly name = 'TlsFileError';
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).message;
    throw new TlsFileError(`${what} "${path}" cannot be read (${code})`);
  }
}

function parsed<T>(path: string, what: string, parse: (text: string) => T): T {
  const text = readText(path, what);
  try {
    return parse(text);
  } catch (err) {
    throw new TlsFileError(`${what} "${path}" is not usable: ${(err as Error).message}`);
  }
}

/** `what` names the file in errors, e.g. `--upstream-credential-bundle`. */
export function readCredentialBundle(path: string, what: string): CredentialBundle {
  return parsed(path, what, parseCredentialBundle);
}

export function readTrustBundle(path: string, what: string): string {
  return parsed(path, what, parseTrustBundle);
}

/** One file to check: a credential bundle (certificate and key) or a trust bundle (CA certificates). */
export interface TlsFileCheck {
  readonly kind: 'credential-bundle' | 'trust-bundle';
  readonly path: string;
  /** How errors name it, e.g. its flag. */
  readonly what: string;
}

/** Reads each file as a start reads it (for `actor-edge validate`); the first missing or unusable one is a UsageError. */
export function checkTlsFiles(files: readonly TlsFileCheck[]): void {
  try {
    for (const f of files) {
      if (f.kind === 'credential-bundle') readCredentialBundle(f.path, f.what);
      else readTrustBundle(f.path, f.what);
    }
  } catch (err) {
    throw err instanceof TlsFileError ? new UsageError(err.message) : err;
  }
}
