/**
 * The egress listener's counters: every CONNECT by outcome, the refusals the listener made itself by reason (the
 * certificate's by `ActorCertificateRefusal`), the tunnels decided on their traffic (allowed by SNI or Host, refused
 * by `HostnameRefusal`), the tunnels (opened, closed by reason, bytes each way), and their grants (held now,
 * re-validations by result). Plain numbers bumped as things happen; `/stats` (`egressTunnels`) reports them since
 * the last reset, except `connections`, `open`, `actors` and the grants held and in flight, which are now;
 * Prometheus reads the lifetime tallies (`egress-metrics.ts`).
 */
import { SinceReset } from '../../lib/since-reset.js';
import { EGRESS_OUTCOMES, type EgressOutcome } from '../../lib/egress/wire.js';
import type { ActorCertificateRefusal } from '../../lib/egress/actor-certificate.js';
import { HOSTNAME_REFUSALS, HOSTNAME_SOURCES, type HostnameRefusal, type HostnameSource } from '../../lib/egress/hostname-decision.js';
import { EGRESS_REVOCATIONS, type EgressRevocation } from './revocation.js';

/**
 * How one CONNECT ended: the slow path's outcomes (`lib/egress/wire.ts`), and the listener's own: another method
 * (`method_not_allowed`), the per-actor bound (`too_many_tunnels`), an allowed destination that could not be dialled
 * (`unreachable`), the drain (`draining`), an error inside the proxy (`internal`), a tunnel decided on its traffic
 * that its first bytes did not allow (`hostname_refused`).
 */
export type EgressConnectOutcome = EgressOutcome | 'method_not_allowed' | 'too_many_tunnels' | 'unreachable' | 'draining' | 'internal' | 'hostname_refused';
export const EGRESS_CONNECT_OUTCOMES: readonly EgressConnectOutcome[] = Object.freeze([
  ...(Object.keys(EGRESS_OUTCOMES) as EgressOutcome[]),
  'method_not_allowed',
  'too_many_tunnels',
  'unreachable',
  'draining',
  'internal',
  'hostname_refused',
]);

/** The refusals the listener makes itself, before or after the verdict. */
export type EgressRefusal = 'method' | 'certificate' | 'authority' | 'forbidden_destination' | 'too_many_tunnels' | 'draining' | 'unreachable';
export const EGRESS_REFUSALS: readonly EgressRefusal[] = Object.freeze(['method', 'certificate', 'authority', 'forbidden_destination', 'too_many_tunnels', 'draining', 'unreachable']);

/**
 * Why a tunnel closed: `actor` / `destination` (that side ended or failed first), `idle`
 * (`--egress-tunnel-idle-timeout-ms`), `lifetime` (`--egress-tunnel-max-lifetime-ms`), `drain` (still open at the end
 * of the drain), `internal` (an error inside the proxy), or its grant ended (`revocation.ts`: `revoked-denied`,
 * `revoked-not-running`, `revoked-unknown`, `certificate-expired`, `revoked-admin`, `revalidation-failed`).
 */
export type EgressCloseReason = 'actor' | 'destination' | 'idle' | 'lifetime' | 'drain' | 'internal' | EgressRevocation;
/** Every reason a certificate is refused (the record makes the list complete). */
const REFUSAL_SET: Readonly<Record<ActorCertificateRefusal, true>> = {
  'no-certificate': true,
  untrusted: true,
  expired: true,
  'not-yet-valid': true,
  'ca-certificate': true,
  'no-client-auth': true,
  'no-uri-san': true,
  'several-uri-sans': true,
  'malformed-uri': true,
};
export const ACTOR_CERTIFICATE_REFUSALS: readonly ActorCertificateRefusal[] = Object.freeze(Object.keys(REFUSAL_SET) as ActorCertificateRefusal[]);

export const EGRESS_CLOSE_REASONS: readonly EgressCloseReason[] = Object.freeze(['actor', 'destination', 'idle', 'lifetime', 'drain', 'internal', ...EGRESS_REVOCATIONS]);

/** Re-validations of the grants by result (`grants.ts`). */
export type RevalidationCount = 'renewed' | 'revoked' | 'failed';

/** What the stats read from the grants. */
export interface EgressGrantsView {
  /** Keys (certificate and destination) with a grant held now. */
  readonly size: number;
  /** Re-validations in flight now. */
  readonly inFlight: number;
  stats(): Record<RevalidationCount, number>;
  lifetimeStats(): Record<RevalidationCount, number>;
  resetStats(): void;
}

/** Bytes through an egress tunnel: from the actor to the destination, and back. */
export interface EgressBytes {
  fromActor: number;
  toActor: number;
}

const zeros = <K extends string>(keys: readonly K[]): Record<K, number> => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export class EgressTallies {
  readonly connects = zeros(EGRESS_CONNECT_OUTCOMES);
  readonly refusals = zeros(EGRESS_REFUSALS);
  readonly certificateRefusals = zeros(ACTOR_CERTIFICATE_REFUSALS);
  readonly hostnames = { allowed: zeros(HOSTNAME_SOURCES), refused: zeros(HOSTNAME_REFUSALS) };
  readonly tunnels = { opened: 0, closed: zeros(EGRESS_CLOSE_REASONS), bytes: { fromActor: 0, toActor: 0 } };
}

/** What the stats read from the open tunnels. */
export interface OpenEgressTunnels {
  readonly size: number;
  /** Actors with at least one tunnel open or being decided. */
  readonly actors: number;
  /** Bytes so far of the tunnels still open. */
  openBytes(): EgressBytes;
}

export interface EgressStatsBlock {
  /** TLS connections to the egress listener open now. */
  readonly connections: number;
  readonly open: number;
  readonly actors: number;
  readonly opened: number;
  readonly closed: Record<EgressCloseReason, number>;
  readonly bytes: EgressBytes;
  readonly connects: Record<EgressConnectOutcome, number>;
  readonly refusals: Record<EgressRefusal, number>;
  readonly certificateRefusals: Record<ActorCertificateRefusal, number>;
  /** Tunnels decided on their traffic: allowed by where the name came from, refused by reason. */
  readonly hostnames: { readonly allowed: Record<HostnameSource, number>; readonly refused: Record<HostnameRefusal, number> };
  /** The grants: held now, re-validations in flight now, re-validations by result since the reset. */
  readonly grants: { readonly held: number; readonly inFlight: number; readonly revalidations: Record<RevalidationCount, number> };
}

const NO_REVALIDATIONS = (): Record<RevalidationCount, number> => ({ renewed: 0, revoked: 0, failed: 0 });
const NO_GRANTS: EgressGrantsView = { size: 0, inFlight: 0, stats: NO_REVALIDATIONS, lifetimeStats: NO_REVALIDATIONS, resetStats: () => undefined };

export class EgressStats {
  readonly tallies = new EgressTallies();
  readonly #sinceReset: SinceReset<EgressTallies>;

  constructor(
    private readonly open: OpenEgressTunnels,
    /** TLS connections open now. */
    private readonly connections: () => number = () => 0,
    private readonly grants: EgressGrantsView = NO_GRANTS,
  ) {
    this.#sinceReset = new SinceReset(() => this.lifetime());
  }

  /** Lifetime tallies, the open tunnels' bytes included. */
  lifetime(): EgressTallies {
    const t = this.tallies;
    const live = this.open.openBytes();
    return {
      ...t,
      tunnels: { ...t.tunnels, bytes: { fromActor: t.tunnels.bytes.fromActor + live.fromActor, toActor: t.tunnels.bytes.toActor + live.toActor } },
    };
  }

  get openTunnels(): number {
    return this.open.size;
  }

  /** Keys with a grant held now. */
  get grantsHeld(): number {
    return this.grants.size;
  }

  /** Re-validations by result since the listener started (Prometheus). */
  revalidationsLifetime(): Record<RevalidationCount, number> {
    return this.grants.lifetimeStats();
  }

  reset(): void {
    this.#sinceReset.reset();
    this.grants.resetStats();
  }

  snapshot(): EgressStatsBlock {
    const d = this.#sinceReset.current();
    return {
      connections: this.connections(),
      open: this.open.size,
      actors: this.open.actors,
      opened: d.tunnels.opened,
      closed: { ...d.tunnels.closed },
      bytes: { ...d.tunnels.bytes },
      connects: { ...d.connects },
      refusals: { ...d.refusals },
      certificateRefusals: { ...d.certificateRefusals },
      hostnames: { allowed: { ...d.hostnames.allowed }, refused: { ...d.hostnames.refused } },
      grants: { held: this.grants.size, inFlight: this.grants.inFlight, revalidations: this.grants.stats() },
    };
  }
}
