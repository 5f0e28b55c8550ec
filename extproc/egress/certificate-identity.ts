/**
 * The actor an egress CONNECT's `source.certificate` attribute names. The data plane verified the certificate's
 * chain against the actor identity CA before it sent it (extproc does not hold that CA); everything else an actor
 * certificate must be is checked again here, now, with the shared check (lib/egress/actor-certificate.ts): inside its
 * validity window (a connection can outlive its certificate), not a CA, ClientAuth, exactly one URI SAN naming an
 * actor. Never throws.
 */
import { X509Certificate } from 'node:crypto';
import { checkActorCertificate, type ActorIdentity } from '../../lib/egress/actor-certificate.js';

export type CertificateIdentity =
  | { readonly kind: 'actor'; readonly actor: ActorIdentity }
  | { readonly kind: 'invalid'; readonly detail: string };

/** Longer than any certificate a data plane sends (a leaf is about 1 KiB); a bigger attribute is refused unparsed. */
export const MAX_CERTIFICATE_PEM = 16 * 1024;

function invalid(detail: string): CertificateIdentity {
  return { kind: 'invalid', detail };
}

/** `pem`: the attribute's value (undefined: the attribute was absent or not a string); `nowMs`: the clock. */
export function identityOfCertificate(pem: string | undefined, nowMs = Date.now()): CertificateIdentity {
  if (pem === undefined || pem === '') return invalid('no source.certificate attribute');
  if (pem.length > MAX_CERTIFICATE_PEM) return invalid(`source.certificate is ${pem.length} characters, more than ${MAX_CERTIFICATE_PEM}`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(pem);
  } catch (err) {
    return invalid(`source.certificate is not a PEM certificate (${(err as Error).message})`);
  }
  let check;
  try {
    // The chain was verified by the data plane's TLS layer: `authorized` stands for that.
    check = checkActorCertificate({ leaf, authorized: true }, nowMs);
  } catch (err) {
    return invalid(`the certificate cannot be read (${(err as Error).message})`);
  }
  return check.kind === 'actor' ? { kind: 'actor', actor: check.actor } : invalid(`${check.reason}: ${check.detail}`);
}
