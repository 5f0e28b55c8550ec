/**
 * The actor certificate checks (reference §2), as a pure function of what the TLS layer saw and the clock: the chain
 * comes from the actor identity CA (node verified it: `authorized`), the certificate is within its validity window,
 * is not a CA, allows client authentication, and names exactly one actor in exactly one SPIFFE URI SAN
 * (`spiffe://substrate-actor.local/ateom-for-actor/<atespace>/<name>`, or the older
 * `spiffe://substrate-actor.local/atespace/<atespace>/actor/<name>`) with valid resource names.
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { isResourceName } from '../../lib/actor-ref.js';

export interface ActorIdentity {
  readonly atespace: string;
  readonly name: string;
}

export const ACTOR_TRUST_DOMAIN = 'substrate-actor.local';

export type ActorCertificateCheck =
  | {
      readonly kind: 'actor';
      readonly actor: ActorIdentity;
      readonly uri: string;
      /** sha256 of the DER, lowercase hex. */
      readonly digest: string;
      readonly notAfterMs: number;
    }
  | { readonly kind: 'refused'; readonly reason: ActorCertificateRefusal; readonly detail: string };

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

export const ACTOR_CERTIFICATE_REFUSALS: readonly ActorCertificateRefusal[] = Object.freeze([
  'no-certificate',
  'untrusted',
  'expired',
  'not-yet-valid',
  'ca-certificate',
  'no-client-auth',
  'no-uri-san',
  'several-uri-sans',
  'malformed-uri',
]);

const NEW_FORM = /^spiffe:\/\/substrate-actor\.local\/ateom-for-actor\/([^/]+)\/([^/]+)$/;
const OLD_FORM = /^spiffe:\/\/substrate-actor\.local\/atespace\/([^/]+)\/actor\/([^/]+)$/;

/** The actor a URI SAN names, or undefined when it is not of either form or the names are not resource names. */
export function actorIdentityOfUri(uri: string): ActorIdentity | undefined {
  const m = NEW_FORM.exec(uri) ?? OLD_FORM.exec(uri);
  if (m === null) return undefined;
  const [atespace, name] = [m[1] as string, m[2] as string];
  return isResourceName(atespace) && isResourceName(name) ? { atespace, name } : undefined;
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** The URI SANs of `subjectAltName` (node's rendering: `URI:…, DNS:…`, values with commas quoted). */
function uriSans(subjectAltName: string | undefined): string[] {
  if (subjectAltName === undefined) return [];
  const out: string[] = [];
  const re = /(?:^|, )URI:("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (let m = re.exec(subjectAltName); m !== null; m = re.exec(subjectAltName)) {
    const v = m[1] as string;
    out.push(v.startsWith('"') ? (JSON.parse(v) as string) : v);
  }
  return out;
}

const refused = (reason: ActorCertificateRefusal, detail: string): ActorCertificateCheck => ({ kind: 'refused', reason, detail });

export function checkActorCertificate(
  presented: { readonly leaf: X509Certificate | undefined; readonly authorized: boolean; readonly authorizationError?: string | undefined },
  nowMs: number,
): ActorCertificateCheck {
  const leaf = presented.leaf;
  if (leaf === undefined) return refused('no-certificate', 'no client certificate');
  const notBefore = Date.parse(leaf.validFrom);
  const notAfter = Date.parse(leaf.validTo);
  if (!presented.authorized) {
    const code = presented.authorizationError ?? 'not verified';
    if (code === 'CERT_HAS_EXPIRED') return refused('expired', `expired at ${leaf.validTo}`);
    if (code === 'CERT_NOT_YET_VALID') return refused('not-yet-valid', `valid from ${leaf.validFrom}`);
    return refused('untrusted', `not from the actor identity CA (${code})`);
  }
  if (!(nowMs <= notAfter)) return refused('expired', `expired at ${leaf.validTo}`);
  if (!(nowMs >= notBefore)) return refused('not-yet-valid', `valid from ${leaf.validFrom}`);
  if (leaf.ca) return refused('ca-certificate', 'a CA certificate');
  const eku = leaf.keyUsage;
  if (eku === undefined || !eku.includes(CLIENT_AUTH)) return refused('no-client-auth', 'no ClientAuth extended key usage');
  const uris = uriSans(leaf.subjectAltName);
  if (uris.length === 0) return refused('no-uri-san', 'no URI SAN');
  if (uris.length > 1) return refused('several-uri-sans', `${uris.length} URI SANs`);
  const uri = uris[0] as string;
  const actor = actorIdentityOfUri(uri);
  if (actor === undefined) return refused('malformed-uri', 'the URI SAN names no actor');
  return { kind: 'actor', actor, uri, digest: createHash('sha256').update(leaf.raw).digest('hex'), notAfterMs: notAfter };
}
