/**
 * Workload identities in certificates: the subject alternative names node:tls reports, SPIFFE URI SANs, and the
 * checks the stack makes — a server is accepted when one of its URI SANs starts with a configured prefix (never by
 * IP or DNS name: a worker's certificate carries only its SPIFFE URI), a client when one of its URI SANs equals the
 * one configured identity, and a peer on the ext_proc hop when one of its URI SANs matches a `SpiffeMatch` (one
 * SPIFFE ID, or every ID under a prefix ending in `/`).
 */
import type { PeerCertificate } from 'node:tls';

export const DEFAULT_SPIFFE_PREFIX = 'spiffe://cluster.local/';

export interface SubjectAltName {
  /** `URI`, `DNS`, `IP Address`, `email`, ... as node:tls names them. */
  readonly type: string;
  readonly value: string;
}

/**
 * Parses node's `subjectaltname` text (`DNS:a, URI:spiffe://x, IP Address:127.0.0.1`); a value node had to quote
 * (it holds a comma, a quote or a control character) comes as a JSON string and is unquoted.
 */
export function parseSubjectAltNames(text: string | undefined): SubjectAltName[] {
  const out: SubjectAltName[] = [];
  if (text === undefined) return out;
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const type = text.slice(i, colon).trim();
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      end = colon + 2;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      value = JSON.parse(text.slice(colon + 1, end + 1)) as string;
      end += 1;
    } else {
      end = text.indexOf(', ', colon);
      if (end < 0) end = text.length;
      value = text.slice(colon + 1, end);
    }
    out.push({ type, value });
    i = end + 2;
  }
  return out;
}

export function uriSans(subjectAltName: string | undefined): string[] {
  return parseSubjectAltNames(subjectAltName)
    .filter((s) => s.type === 'URI')
    .map((s) => s.value);
}

/** What a peer presented, for logs: its SANs, or its subject when it has none. */
export function presentedIdentity(cert: Pick<PeerCertificate, 'subjectaltname' | 'subject'> | undefined): string {
  if (cert === undefined || Object.keys(cert).length === 0) return '(no certificate)';
  if (cert.subjectaltname) return cert.subjectaltname;
  const cn = cert.subject?.CN;
  return cn === undefined ? '(no subject alternative name)' : `(no subject alternative name; CN=${String(cn)})`;
}

/** Throws unless `prefix` is a SPIFFE URI prefix ending in `/` (so `spiffe://a/` never matches `spiffe://a.evil/`). */
export function validateSpiffePrefix(prefix: string): string {
  if (!/^spiffe:\/\/[^/\s]+\/[^\s]*$/.test(prefix) || !prefix.endsWith('/')) {
    throw new Error(`"${prefix}" is not a SPIFFE URI prefix ending in "/" (e.g. ${DEFAULT_SPIFFE_PREFIX})`);
  }
  return prefix;
}

/** Throws unless `identity` is one SPIFFE URI (`spiffe://trust-domain/path`). */
export function validateSpiffeId(identity: string): string {
  if (!/^spiffe:\/\/[^/\s]+\/[^\s]+$/.test(identity)) throw new Error(`"${identity}" is not a SPIFFE URI (spiffe://trust-domain/path)`);
  return identity;
}

/** Why a certificate's identity was refused; undefined when it is accepted. */
export function refuseServerIdentity(subjectAltName: string | undefined, prefix: string): string | undefined {
  const uris = uriSans(subjectAltName);
  if (uris.length === 0) return 'the certificate has no URI SAN';
  return uris.some((u) => u.startsWith(prefix)) ? undefined : `no URI SAN starts with ${prefix}`;
}

/** True when one of the certificate's URI SANs is exactly `identity`. */
export function hasIdentity(subjectAltName: string | undefined, identity: string): boolean {
  return uriSans(subjectAltName).includes(identity);
}

/** A configured peer identity: exactly one SPIFFE ID, or every ID under a prefix that ends in `/`. */
export interface SpiffeMatch {
  readonly kind: 'id' | 'prefix';
  /** The ID or the prefix, as configured. */
  readonly text: string;
}

/** `spiffe://td/ns/x/sa/proxy` (that ID) or `spiffe://td/ns/x/` (every ID under it); throws on anything else. */
export function parseSpiffeMatch(text: string): SpiffeMatch {
  if (text.endsWith('/')) return Object.freeze({ kind: 'prefix', text: validateSpiffePrefix(text) });
  return Object.freeze({ kind: 'id', text: validateSpiffeId(text) });
}

/** How a match reads in logs and errors. */
export function describeSpiffeMatch(match: SpiffeMatch): string {
  return match.kind === 'id' ? match.text : `${match.text}*`;
}

/** Why a peer's certificate identity was refused under `match`; undefined when one of its URI SANs matches. */
export function refusePeerIdentity(subjectAltName: string | undefined, match: SpiffeMatch): string | undefined {
  const uris = uriSans(subjectAltName);
  if (uris.length === 0) return 'the certificate has no URI SAN';
  const ok = match.kind === 'id' ? uris.includes(match.text) : uris.some((u) => u.startsWith(match.text));
  return ok ? undefined : `no URI SAN is ${describeSpiffeMatch(match)}`;
}
