/**
 * The actor certificate an egress connection presents, checked as the platform's egress gateway checks it: a chain
 * from the actor identity CA (verified by the TLS layer), inside its validity window, not a CA certificate, with the
 * ClientAuth extended key usage and exactly one URI SAN naming an actor
 * (`spiffe://substrate-actor.local/ateom-for-actor/<atespace>/<name>`, or the older
 * `spiffe://substrate-actor.local/atespace/<atespace>/actor/<name>`). Pure: what TLS saw and the clock are inputs.
 */
import { createHash, type X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { isResourceName } from '../actor-ref.js';
import { uriSans } from '../tls/identity.js';

export interface ActorIdentity {
  readonly atespace: string;
  readonly name: string;
}

export const ACTOR_TRUST_DOMAIN = 'substrate-actor.local';

const PREFIX = `spiffe://${ACTOR_TRUST_DOMAIN}/`;

/** The extended key usage OID of TLS client authentication. */
export const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/** The URI an actor certificate names `actor` by (the newest form). */
export function actorUri(actor: ActorIdentity): string {
  return `${PREFIX}ateom-for-actor/${actor.atespace}/${actor.name}`;
}

/**
 * spiffe://substrate-actor.local/ateom-for-actor/<atespace>/<name> (also accepts the older
 * spiffe://substrate-actor.local/atespace/<atespace>/actor/<name>); undefined when not of either form or the names
 * are not valid resource names (lib/actor-ref.ts isResourceName).
 */
export function actorIdentityOfUri(uri: string): ActorIdentity | undefined {
  if (typeof uri !== 'string' || !uri.startsWith(PREFIX)) return undefined;
  const parts = uri.slice(PREFIX.length).split('/');
  let atespace: string | undefined;
  let name: string | undefined;
  if (parts.length === 3 && parts[0] === 'ateom-for-actor') [, atespace, name] = parts;
  else if (parts.length === 4 && parts[0] === 'atespace' && parts[2] === 'actor') [, atespace, , name] = parts;
  if (atespace === undefined || name === undefined || !isResourceName(atespace) || !isResourceName(name)) return undefined;
  return Object.freeze({ atespace, name });
}

export type ActorCertificateRefusal =
  | 'no-certificate'
  | 'untrusted'
  | 'expired'
  | 'not-yet-valid'
  | 'ca-certificate'
  | 'no-client-auth'
  | 'no-uri-san'
  | 'several-uri-sans'
  | 'malformed-uri';

export type ActorCertificateCheck =
  | {
      readonly kind: 'actor';
      readonly actor: ActorIdentity;
      readonly uri: string;
      /** sha256 of the DER, lowercase hex: the cache key's certificate half. */
      readonly digest: string;
      readonly notAfterMs: number;
    }
  | { readonly kind: 'refused'; readonly reason: ActorCertificateRefusal; readonly detail: string };

/** What the TLS layer saw of the peer. */
export interface PresentedCertificate {
  /** The peer's leaf certificate; undefined when it presented none. */
  readonly leaf: X509Certificate | undefined;
  /** Whether node verified its chain against the actor identity CA (`socket.authorized`). */
  readonly authorized: boolean;
  /** node's `authorizationError` code when it did not (`CERT_HAS_EXPIRED`, ...). */
  readonly authorizationError?: string | undefined;
}

/**
 * What a TLS server socket reports of its peer, as `checkActorCertificate` takes it. node gives
 * `authorizationError` as a code string (`CERT_HAS_EXPIRED`), though its type says Error: both are read.
 */
export function presentedCertificateOf(socket: Pick<TLSSocket, 'getPeerX509Certificate' | 'authorized' | 'authorizationError'>): PresentedCertificate {
  const error = socket.authorizationError as unknown;
  const code = typeof error === 'string' ? error : error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : undefined;
  return { leaf: socket.getPeerX509Certificate(), authorized: socket.authorized, authorizationError: code };
}

type Refused = Extract<ActorCertificateCheck, { kind: 'refused' }>;

function refused(reason: ActorCertificateRefusal, detail: string): Refused {
  return Object.freeze({ kind: 'refused', reason, detail });
}

/** OpenSSL's verdicts on a chain that name the certificate's purpose rather than its issuer. */
const PURPOSE_ERRORS = new Set(['UNSUPPORTED_CERTIFICATE_PURPOSE', 'INVALID_PURPOSE']);

/** A CA certificate, or one without ClientAuth: refused whatever signed it. */
function usageProblem(leaf: X509Certificate): Refused | undefined {
  if (leaf.ca) return refused('ca-certificate', 'a CA certificate is not an actor certificate');
  // node returns the extended key usage OIDs here (undefined when the extension is absent).
  const eku = (leaf.keyUsage as readonly string[] | undefined) ?? [];
  if (!eku.includes(CLIENT_AUTH_OID)) return refused('no-client-auth', 'the certificate does not allow TLS client authentication');
  return undefined;
}

/** Why the TLS layer refused the chain, in the reasons above. */
function unverified(leaf: X509Certificate, code: string | undefined): Refused {
  if (code === 'CERT_HAS_EXPIRED') return refused('expired', `the certificate expired at ${leaf.validTo}`);
  if (code === 'CERT_NOT_YET_VALID') return refused('not-yet-valid', `the certificate is valid only from ${leaf.validFrom}`);
  // A purpose error is the TLS layer finding what usageProblem finds; anything else is a chain problem.
  if (code !== undefined && PURPOSE_ERRORS.has(code)) {
    const problem = usageProblem(leaf);
    if (problem !== undefined) return problem;
  }
  return refused('untrusted', `the certificate is not from the actor identity CA (${code ?? 'not verified'})`);
}

/**
 * Checks the certificate an egress connection presented at `nowMs`: the actor it names and its digest, or why it is
 * refused. Never throws.
 */
export function checkActorCertificate(presented: PresentedCertificate, nowMs: number): ActorCertificateCheck {
  const leaf = presented.leaf;
  if (leaf === undefined) return refused('no-certificate', 'no client certificate was presented');
  if (!presented.authorized) return unverified(leaf, presented.authorizationError);
  const notBeforeMs = Date.parse(leaf.validFrom);
  const notAfterMs = Date.parse(leaf.validTo);
  if (!(nowMs >= notBeforeMs)) return refused('not-yet-valid', `the certificate is valid only from ${leaf.validFrom}`);
  if (!(nowMs <= notAfterMs)) return refused('expired', `the certificate expired at ${leaf.validTo}`);
  const problem = usageProblem(leaf);
  if (problem !== undefined) return problem;
  const uris = uriSans(leaf.subjectAltName);
  if (uris.length === 0) return refused('no-uri-san', 'the certificate has no URI SAN');
  if (uris.length > 1) return refused('several-uri-sans', `the certificate has ${uris.length} URI SANs; an actor certificate has one`);
  const uri = uris[0] as string;
  const actor = actorIdentityOfUri(uri);
  if (actor === undefined) return refused('malformed-uri', `the URI SAN ${JSON.stringify(uri)} names no actor`);
  const digest = createHash('sha256').update(leaf.raw).digest('hex');
  return Object.freeze({ kind: 'actor', actor, uri, digest, notAfterMs });
}
