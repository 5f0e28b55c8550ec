/**
 * Actor certificates minted by the stub's actor identity CA (`--actor-ca-dir`), as the platform mints one per
 * activation: for an actor that is running (or resuming: its activation is under way), through the admin API
 * (`POST /actors/:atespace/:name/certificate`), for whatever plays the actor's egress client.
 */
import { mintActorCertificate, requireActorCa, DEFAULT_ACTOR_CERT_LIFETIME_MS } from '../lib/tls/actor-certs.js';
import { UsageError } from '../lib/flags.js';
import { errors } from './errors.js';
import type { ActorRecord } from './store.js';

/** States an actor may hold a certificate in. */
const ACTIVE: ReadonlySet<string> = new Set(['RUNNING', 'RESUMING']);

/** The longest lifetime a caller may ask for (the platform's certificates live one hour). */
export const MAX_ACTOR_CERT_LIFETIME_MS = 24 * 60 * 60_000;

export interface MintedForActor {
  /** The certificate then its key (PEM): one credential bundle. */
  readonly bundle: string;
  /** NotAfter, ISO 8601. */
  readonly notAfter: string;
  readonly notAfterMs: number;
}

/** Checks `caDir` at start: a directory without the actor identity CA's two files is a usage error. */
export async function checkActorCaDir(caDir: string | undefined): Promise<void> {
  if (caDir === undefined) return;
  try {
    await requireActorCa(caDir);
  } catch (err) {
    throw new UsageError(`--actor-ca-dir: ${(err as Error).message}`);
  }
}

/** Reads an optional `{"lifetimeMs": N}` body; INVALID_ARGUMENT otherwise. */
export function lifetimeOf(body: unknown): number {
  if (body === undefined || body === null || body === '') return DEFAULT_ACTOR_CERT_LIFETIME_MS;
  if (typeof body !== 'object' || Array.isArray(body)) throw errors.invalidArgument('expected no body or {"lifetimeMs": N}');
  const { lifetimeMs, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw errors.invalidArgument(`unknown field "${unknown[0]}" (known: lifetimeMs)`);
  if (lifetimeMs === undefined) return DEFAULT_ACTOR_CERT_LIFETIME_MS;
  if (typeof lifetimeMs !== 'number' || !Number.isInteger(lifetimeMs) || lifetimeMs < 1000 || lifetimeMs > MAX_ACTOR_CERT_LIFETIME_MS) {
    throw errors.invalidArgument(`lifetimeMs: expected a whole number of milliseconds from 1000 to ${MAX_ACTOR_CERT_LIFETIME_MS}`);
  }
  return lifetimeMs;
}

export class ActorCertificates {
  /** `caDir` undefined: the stub has no actor identity CA and mints nothing. */
  constructor(private readonly caDir: string | undefined) {}

  /** UNIMPLEMENTED without a CA; FAILED_PRECONDITION for an actor that is neither running nor resuming. */
  async mint(actor: ActorRecord, lifetimeMs: number): Promise<MintedForActor> {
    if (this.caDir === undefined) throw errors.noActorCa();
    if (!ACTIVE.has(actor.status)) throw errors.notRunning(actor.key, actor.status);
    const minted = await mintActorCertificate(this.caDir, { atespace: actor.ref.atespace, name: actor.ref.name, lifetimeMs });
    return { bundle: minted.bundle, notAfter: new Date(minted.notAfterMs).toISOString(), notAfterMs: minted.notAfterMs };
  }
}
