/**
 * The actor an egress CONNECT's `source.certificate` attribute names: the PEM parsed as an X.509 certificate, whose
 * one URI SAN must name an actor. The data plane verified the certificate (chain, validity, usage) before it sent
 * it; this reads who it belongs to. Never throws.
 */
import { X509Certificate } from 'node:crypto';
import { uriSans } from '../../lib/tls/identity.js';
import { actorIdentityOfUri, type ActorIdentity } from './actor-identity-shim.js';

export type CertificateIdentity =
  | { readonly kind: 'actor'; readonly actor: ActorIdentity }
  | { readonly kind: 'invalid'; readonly detail: string };

/** Longer than any certificate a data plane sends (a leaf is about 1 KiB); a bigger attribute is refused unparsed. */
export const MAX_CERTIFICATE_PEM = 16 * 1024;

function invalid(detail: string): CertificateIdentity {
  return { kind: 'invalid', detail };
}

/** `pem`: the attribute's value (undefined: the attribute was absent or not a string). */
export function identityOfCertificate(pem: string | undefined): CertificateIdentity {
  if (pem === undefined || pem === '') return invalid('no source.certificate attribute');
  if (pem.length > MAX_CERTIFICATE_PEM) return invalid(`source.certificate is ${pem.length} characters, more than ${MAX_CERTIFICATE_PEM}`);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch (err) {
    return invalid(`source.certificate is not a PEM certificate (${(err as Error).message})`);
  }
  let uris: string[];
  try {
    uris = uriSans(certificate.subjectAltName);
  } catch (err) {
    return invalid(`the certificate's subject alternative names cannot be read (${(err as Error).message})`);
  }
  if (uris.length !== 1) return invalid(`the certificate has ${uris.length} URI SANs; an actor certificate has one`);
  const actor = actorIdentityOfUri(uris[0] as string);
  if (actor === undefined) return invalid(`the URI SAN ${JSON.stringify(uris[0])} names no actor`);
  return { kind: 'actor', actor };
}
