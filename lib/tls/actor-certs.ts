/**
 * Actor certificates, minted per activation as the platform does: a fresh EC P-256 key, NotBefore five minutes
 * back, NotAfter after the lifetime (default one hour), EKU ClientAuth + ServerAuth and exactly one URI SAN
 * (`spiffe://substrate-actor.local/ateom-for-actor/<atespace>/<name>`), signed by the actor identity CA — a CA of
 * its own (`actor-ca.pem`, `actor-ca.key`), not the one the stack's components trust.
 */
import { access } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import { isResourceName } from '../actor-ref.js';
import { actorUri } from '../egress/actor-certificate.js';
import { DevCa } from './dev-ca.js';
import { signDatedLeaf, type CaFiles } from './dated-leaf.js';

/** The actor identity CA's file name (without `.pem` / `.key`). */
export const ACTOR_CA_NAME = 'actor-ca';
export const DEFAULT_ACTOR_CERT_LIFETIME_MS = 60 * 60_000;
/** How far back NotBefore is set, for clocks behind the minter's. */
export const ACTOR_CERT_BACKDATE_MS = 5 * 60_000;

export interface ActorCertSpec {
  readonly atespace: string;
  readonly name: string;
  /** Default one hour. */
  readonly lifetimeMs?: number;
}

export interface MintedActorCertificate {
  /** The certificate then the key: one credential bundle. */
  readonly bundle: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly notAfterMs: number;
}

/** The actor identity CA's files in `caDir`. */
export function actorCaFiles(caDir: string): CaFiles {
  return Object.freeze({ certFile: path.join(caDir, `${ACTOR_CA_NAME}.pem`), keyFile: path.join(caDir, `${ACTOR_CA_NAME}.key`) });
}

/** Writes a new actor identity CA (`actor-ca.pem`, `actor-ca.key`) into `dir`, valid for `days` (default 365). */
export function createActorCa(dir: string, opts: { readonly days?: number; readonly commonName?: string } = {}): Promise<DevCa> {
  return DevCa.create(dir, { name: ACTOR_CA_NAME, commonName: opts.commonName ?? 'actor-edge actor identity CA', days: opts.days });
}

/** Throws unless `caDir` holds the actor identity CA's two files. */
export async function requireActorCa(caDir: string, ca: CaFiles = actorCaFiles(caDir)): Promise<void> {
  try {
    await Promise.all([access(ca.certFile), access(ca.keyFile)]);
  } catch {
    throw new Error(`${caDir} holds no actor identity CA (${ACTOR_CA_NAME}.pem and ${ACTOR_CA_NAME}.key; \`actor-edge certs\` writes one)`);
  }
}

/**
 * A fresh key and certificate (NotBefore 5 min back, NotAfter now + lifetime, EKU clientAuth+serverAuth, one URI SAN)
 * signed by the actor identity CA in `caDir` (files actor-ca.pem, actor-ca.key). Returns the PEM bundle (cert+key).
 * Throws on an invalid atespace or name, or a lifetime that is not a positive number of milliseconds.
 */
export async function mintActorCertificate(caDir: string, spec: ActorCertSpec): Promise<MintedActorCertificate> {
  if (!isResourceName(spec.atespace)) throw new Error(`"${spec.atespace}" is not a valid atespace name`);
  if (!isResourceName(spec.name)) throw new Error(`"${spec.name}" is not a valid actor name`);
  const lifetimeMs = spec.lifetimeMs ?? DEFAULT_ACTOR_CERT_LIFETIME_MS;
  if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) throw new Error(`lifetime ${lifetimeMs} ms: expected a positive number of milliseconds`);
  const ca = actorCaFiles(caDir);
  await requireActorCa(caDir, ca);
  const now = Date.now();
  const { certPem, keyPem } = await signDatedLeaf(ca, {
    commonName: spec.name,
    uris: [actorUri(spec)],
    notBeforeMs: now - ACTOR_CERT_BACKDATE_MS,
    notAfterMs: now + lifetimeMs,
    extendedKeyUsage: ['clientAuth', 'serverAuth'],
  });
  const notAfterMs = Date.parse(new X509Certificate(certPem).validTo);
  return Object.freeze({ bundle: certPem + keyPem, certPem, keyPem, notAfterMs });
}
