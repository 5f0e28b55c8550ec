/**
 * Test actor certificates: an actor identity CA in a temporary directory, good certificates (the newest URI form and
 * the older one), and one certificate for every way an actor certificate must be refused — each with the refusal
 * `checkActorCertificate` gives it. Built once per test process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ACTOR_TRUST_DOMAIN, actorUri, type ActorCertificateRefusal, type ActorIdentity } from '../../egress/actor-certificate.js';
import { ACTOR_CERT_BACKDATE_MS, actorCaFiles, createActorCa, mintActorCertificate } from '../actor-certs.js';
import { signDatedLeaf, type CaFiles, type DatedLeafSpec } from '../dated-leaf.js';
import { DevCa } from '../dev-ca.js';

/** A certificate and its key, and both as one credential bundle. */
export interface TestActorCert {
  readonly certPem: string;
  readonly keyPem: string;
  readonly bundle: string;
}

/** Every bad variant, and the refusal it must get. */
export const BAD_ACTOR_CERTS = Object.freeze({
  'other-ca': 'untrusted',
  expired: 'expired',
  'not-yet-valid': 'not-yet-valid',
  'ca-certificate': 'ca-certificate',
  'server-auth-only': 'no-client-auth',
  'no-extended-key-usage': 'no-client-auth',
  'no-uri-san': 'no-uri-san',
  'two-uri-sans': 'several-uri-sans',
  'malformed-spiffe-uri': 'malformed-uri',
  'other-trust-domain': 'malformed-uri',
  'invalid-atespace': 'malformed-uri',
  'invalid-name': 'malformed-uri',
} as const satisfies Readonly<Record<string, ActorCertificateRefusal>>);

export type BadActorCert = keyof typeof BAD_ACTOR_CERTS;

export interface ActorCertFixtures {
  readonly dir: string;
  /** The actor identity CA's directory (actor-ca.pem, actor-ca.key), for `mintActorCertificate`. */
  readonly caDir: string;
  /** The actor identity CA's certificate file (what an egress listener trusts). */
  readonly caFile: string;
  /** The actor every good certificate names. */
  readonly actor: ActorIdentity;
  /** Minted by `mintActorCertificate`. */
  readonly good: TestActorCert;
  /** From the same CA, naming the actor by the older URI form. */
  readonly goodOlderForm: TestActorCert;
  readonly bad: Readonly<Record<BadActorCert, TestActorCert>>;
  /** A server certificate for 127.0.0.1 and localhost from a CA of its own (`serverCaFile`). */
  readonly server: string;
  readonly serverCaFile: string;
  close(): Promise<void>;
}

const HOUR_MS = 60 * 60_000;

/** Signs a certificate like a minted one, with `overrides` applied. */
export async function signActorVariant(ca: CaFiles, overrides: Partial<DatedLeafSpec> = {}): Promise<TestActorCert> {
  const now = Date.now();
  const { certPem, keyPem } = await signDatedLeaf(ca, {
    commonName: 'actor',
    uris: [actorUri({ atespace: 'team-a', name: 'agent-1' })],
    notBeforeMs: now - ACTOR_CERT_BACKDATE_MS,
    notAfterMs: now + HOUR_MS,
    extendedKeyUsage: ['clientAuth', 'serverAuth'],
    ...overrides,
  });
  return Object.freeze({ certPem, keyPem, bundle: certPem + keyPem });
}

async function build(): Promise<ActorCertFixtures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-actor-certs-'));
  try {
    const caDir = path.join(dir, 'actor-ca');
    const otherDir = path.join(dir, 'other-actor-ca');
    // The other CA looks the same (name and subject) but has its own key.
    await Promise.all([createActorCa(caDir), createActorCa(otherDir)]);
    const ca = actorCaFiles(caDir);
    const actor = Object.freeze({ atespace: 'team-a', name: 'agent-1' });
    const uri = actorUri(actor);
    const now = Date.now();
    const variant = (overrides: Partial<DatedLeafSpec>): Promise<TestActorCert> => signActorVariant(ca, { uris: [uri], ...overrides });
    const specs: Record<BadActorCert, () => Promise<TestActorCert>> = {
      'other-ca': () => signActorVariant(actorCaFiles(otherDir), { uris: [uri] }),
      expired: () => variant({ notBeforeMs: now - 2 * HOUR_MS, notAfterMs: now - HOUR_MS }),
      'not-yet-valid': () => variant({ notBeforeMs: now + HOUR_MS, notAfterMs: now + 2 * HOUR_MS }),
      'ca-certificate': () => variant({ ca: true }),
      'server-auth-only': () => variant({ extendedKeyUsage: ['serverAuth'] }),
      'no-extended-key-usage': () => variant({ extendedKeyUsage: [] }),
      'no-uri-san': () => variant({ uris: [] }),
      'two-uri-sans': () => variant({ uris: [uri, actorUri({ atespace: 'team-a', name: 'agent-2' })] }),
      'malformed-spiffe-uri': () => variant({ uris: [`spiffe://${ACTOR_TRUST_DOMAIN}/ateom-for-actor/team-a`] }),
      'other-trust-domain': () => variant({ uris: ['spiffe://cluster.local/ateom-for-actor/team-a/agent-1'] }),
      'invalid-atespace': () => variant({ uris: [actorUri({ atespace: 'Team_A', name: 'agent-1' })] }),
      'invalid-name': () => variant({ uris: [actorUri({ atespace: 'team-a', name: 'a'.repeat(64) })] }),
    };
    const names = Object.keys(specs) as BadActorCert[];
    const serverCa = await DevCa.create(path.join(dir, 'server-ca'), { commonName: 'egress server CA' });
    const [minted, goodOlderForm, server, ...bad] = await Promise.all([
      mintActorCertificate(caDir, actor),
      variant({ uris: [`spiffe://${ACTOR_TRUST_DOMAIN}/atespace/${actor.atespace}/actor/${actor.name}`] }),
      serverCa.issue({ name: 'server', commonName: 'localhost', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server' }),
      ...names.map((n) => specs[n]()),
    ]);
    const good = Object.freeze({ certPem: minted.certPem, keyPem: minted.keyPem, bundle: minted.bundle });
    return Object.freeze({
      dir,
      caDir,
      caFile: ca.certFile,
      actor,
      good,
      goodOlderForm,
      bad: Object.freeze(Object.fromEntries(names.map((n, i) => [n, bad[i] as TestActorCert])) as Record<BadActorCert, TestActorCert>),
      server,
      serverCaFile: serverCa.certFile,
      close: () => {
        shared = undefined;
        return rm(dir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

let shared: Promise<ActorCertFixtures> | undefined;

/** The actor certificate fixtures, shared until a caller closes them (in a final after()); a later caller gets fresh ones. */
export function actorCertFixtures(): Promise<ActorCertFixtures> {
  shared ??= build();
  return shared;
}
