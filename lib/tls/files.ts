/**
 * Reading TLS files with errors that name the file, the flag and what is wrong with it. A start fails with one of
 * these; a rotation that meets one keeps the credentials it had and logs it.
 */
import { readFileSync } from 'node:fs';
import { parseCredentialBundle, parseTrustBundle, type CredentialBundle } from './pem.js';

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
