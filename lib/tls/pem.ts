/**
 * PEM text split into its blocks, and a credential bundle (one file holding a certificate chain and its private
 * key, leaf first) split into the `cert` and `key` that node:tls takes. Nothing here reads files.
 */
import { X509Certificate } from 'node:crypto';

export interface PemBlock {
  /** `CERTIFICATE`, `PRIVATE KEY`, `EC PRIVATE KEY`, ... */
  readonly label: string;
  /** The whole block, BEGIN and END lines included. */
  readonly text: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?-----END \1-----/g;

export function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(BLOCK)].map((m) => ({ label: m[1] as string, text: m[0] }));
}

/** A client or server identity: its certificate chain (leaf first) and private key, as PEM. */
export interface CredentialBundle {
  readonly cert: string;
  readonly key: string;
  /** The leaf certificate (for its identity and validity). */
  readonly leaf: X509Certificate;
}

/** Parses a credential bundle; throws an Error that says what is missing. */
export function parseCredentialBundle(text: string): CredentialBundle {
  const blocks = pemBlocks(text);
  const certs = blocks.filter((b) => b.label === 'CERTIFICATE');
  const keys = blocks.filter((b) => b.label.endsWith('PRIVATE KEY'));
  if (certs.length === 0) throw new Error('no CERTIFICATE block');
  if (keys.length !== 1) throw new Error(keys.length === 0 ? 'no PRIVATE KEY block' : 'more than one PRIVATE KEY block');
  const leaf = new X509Certificate(certs[0]!.text);
  return { cert: certs.map((c) => c.text).join('\n') + '\n', key: keys[0]!.text + '\n', leaf };
}

/** Parses a trust bundle (CA certificates); throws when it holds none. */
export function parseTrustBundle(text: string): string {
  const certs = pemBlocks(text).filter((b) => b.label === 'CERTIFICATE');
  if (certs.length === 0) throw new Error('no CERTIFICATE block');
  for (const c of certs) new X509Certificate(c.text); // throws on a damaged certificate
  return certs.map((c) => c.text).join('\n') + '\n';
}
