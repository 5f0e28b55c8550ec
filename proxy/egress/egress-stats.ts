/**
 * The egress listener's counters, declared once (`EGRESS_STATS`: the `/stats` `egressTunnels` block and its
 * metrics): every CONNECT by outcome, the refusals the listener made itself by reason (the
 * certificate's by `ActorCertificateRefusal`), the tunnels decided on their traffic (allowed by SNI or Host, refused
 * by `HostnameRefusal`), the tunnels (opened, closed by reason, bytes each way), and their grants (held now,
 * re-validations by result). Plain numbers bumped as things happen, each a tally of `EGRESS_STATS` that is its own
 * storage (`EgressStats.tallies`, and the grants' re-validations theirs: a new counter is its declaration and its
 * `++`); `/stats` (`egressTunnels`) reports them since
 * the last reset, except `connections`, `open`, `actors` and the grants held and in flight, which are now;
 * Prometheus reads the lifetime tallies.
 */
import { SinceReset } from '../../lib/since-reset.js';
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../lib/stats/derive.js';
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

/** What the stats read from the open tunnels. */
export interface OpenEgressTunnels {
  readonly size: number;
  /** Actors with at least one tunnel open or being decided. */
  readonly actors: number;
  /** Bytes so far of the tunnels still open. */
  openBytes(): EgressBytes;
}

/**
 * What the declarations read: the tallies as `{ egressTunnels: … }` and the grants' re-validations (since the last
 * reset for `/stats`, lifetime for `/metrics`; open tunnels' bytes included) and the listener now.
 */
export interface EgressView {
  readonly tallies: object;
  /** TLS connections to the egress listener open now. */
  readonly connections: number;
  readonly open: OpenEgressTunnels;
  readonly grants: EgressGrantsView;
}

const BYTES = { kind: 'tally', name: 'egress_tunnel_bytes_total', help: 'Bytes through egress tunnels, by direction (open tunnels included).' } as const;

/**
 * The `/stats` `egressTunnels` block and its `actor_edge_proxy_egress_…` metrics, declared once
 * (lib/stats/declare.ts). Labels are fixed sets: the CONNECT outcomes, the listener's refusal reasons, the
 * certificate refusal reasons, the hostname decisions' sources and refusal reasons, the tunnel close reasons, the
 * re-validation results and the two directions; never anything an actor names.
 */
export const EGRESS_STATS = declare<EgressView>()({
  egressTunnels: {
    connections: { kind: 'stat', help: 'TLS connections to the egress listener open now.', read: (v) => v.connections },
    open: { kind: 'gauge', name: 'egress_tunnels_open', help: 'Egress tunnels open now.', read: (v) => v.open.size },
    actors: { kind: 'stat', help: 'Actors with at least one egress tunnel open or being decided.', read: (v) => v.open.actors },
    opened: { kind: 'tally', name: 'egress_tunnels_total', help: 'Egress tunnels opened.' },
    closed: {
      kind: 'tally',
      name: 'egress_tunnels_closed_total',
      label: 'reason',
      keys: EGRESS_CLOSE_REASONS,
      help: 'Egress tunnels closed, by reason: actor, destination, idle, lifetime, drain, internal, and their grant ended: revoked-denied, revoked-not-running, revoked-unknown, certificate-expired, revoked-admin, revalidation-failed.',
    },
    bytes: {
      fromActor: { ...BYTES, labels: { direction: 'from_actor' } },
      toActor: { ...BYTES, labels: { direction: 'to_actor' } },
    },
    connects: {
      kind: 'tally',
      name: 'egress_connects_total',
      label: 'outcome',
      keys: EGRESS_CONNECT_OUTCOMES,
      help: 'CONNECTs on the egress listener, by outcome: allowed (a tunnel opened), denied, invalid_certificate, unknown_actor, not_running, not_ip_authority, unavailable, cancelled, method_not_allowed, too_many_tunnels, unreachable, draining, internal, hostname_refused.',
    },
    refusals: {
      kind: 'tally',
      name: 'egress_refusals_total',
      label: 'reason',
      keys: EGRESS_REFUSALS,
      help: 'CONNECTs the egress listener refused itself, by reason: method, certificate, authority (not IP:port), too_many_tunnels, draining, unreachable (the allowed destination could not be dialled).',
    },
    certificateRefusals: {
      kind: 'tally',
      name: 'egress_certificate_refusals_total',
      label: 'reason',
      keys: ACTOR_CERTIFICATE_REFUSALS,
      help: 'CONNECTs refused 403 invalid actor certificate, by what the certificate failed (never sent to ext_proc, never cached).',
    },
    hostnames: {
      allowed: {
        kind: 'tally',
        name: 'egress_hostname_allowed_total',
        label: 'by',
        keys: HOSTNAME_SOURCES,
        help: 'Egress tunnels decided on their traffic (only hostname rules could allow the destination) that a rule allowed, by where the name came from: sni (a TLS ClientHello), host (a cleartext HTTP/1.1 request).',
      },
      refused: {
        kind: 'tally',
        name: 'egress_hostname_refusals_total',
        label: 'reason',
        keys: HOSTNAME_REFUSALS,
        help: 'Egress tunnels decided on their traffic that were closed after their 200, by reason: no_sni, no_match, unknown_protocol (neither TLS nor HTTP/1.1), malformed, timeout (--egress-sni-timeout-ms), too_large (--egress-sni-max-bytes).',
      },
    },
    grants: {
      held: {
        kind: 'gauge',
        name: 'egress_grants',
        help: 'Egress grants held now: certificate and destination pairs with a tunnel open (each re-validated ahead of its lease).',
        read: (v) => v.grants.size,
      },
      inFlight: { kind: 'stat', help: 'Re-validations of egress grants in flight now.', read: (v) => v.grants.inFlight },
      revalidations: {
        kind: 'tally',
        name: 'egress_revalidations_total',
        label: 'result',
        keys: ['renewed', 'revoked', 'failed'] as const satisfies readonly RevalidationCount[],
        help: 'Re-validations of egress grants through ext_proc, by result: renewed (the lease renewed; tunnels allowed for a hostname the fresh rules no longer match are closed), revoked (the answer ended the grant and closed its tunnels), failed (no answer that decides: the tunnels stay open until the lease runs out).',
      },
    },
  },
});

/** The `egressTunnels` block of `/stats` (with `--egress-listen`). */
export type EgressStatsBlock = StatsOf<typeof EGRESS_STATS>['egressTunnels'];

/**
 * The listener's tallies, one per tally of `EGRESS_STATS` at its path below `egressTunnels` (`opened`,
 * `closed.idle`, `connects.allowed` …), but the grants' (`revalidationTallies()`, which the grants keep).
 */
export type EgressTallies = Omit<TalliesOf<typeof EGRESS_STATS>['egressTunnels'], 'grants'>;

function egressTallies(): EgressTallies {
  const { grants: _grants, ...own } = talliesOf(EGRESS_STATS).egressTunnels;
  return own;
}

/** The grants' re-validations by result, the `grants.revalidations` tally of `EGRESS_STATS` (`grants.ts`). */
export function revalidationTallies(): Record<RevalidationCount, number> {
  return talliesOf(EGRESS_STATS).egressTunnels.grants.revalidations;
}

const NO_REVALIDATIONS = (): Record<RevalidationCount, number> => ({ renewed: 0, revoked: 0, failed: 0 });
const NO_GRANTS: EgressGrantsView = { size: 0, inFlight: 0, stats: NO_REVALIDATIONS, lifetimeStats: NO_REVALIDATIONS, resetStats: () => undefined };

export class EgressStats implements StatsSource<EgressView> {
  readonly tallies: EgressTallies = egressTallies();
  readonly #sinceReset: SinceReset<EgressTallies>;

  constructor(
    private readonly open: OpenEgressTunnels,
    /** TLS connections open now. */
    private readonly connections: () => number = () => 0,
    private readonly grants: EgressGrantsView = NO_GRANTS,
  ) {
    this.#sinceReset = new SinceReset(() => this.#lifetimeTallies());
  }

  /** Lifetime tallies, the open tunnels' bytes included. */
  #lifetimeTallies(): EgressTallies {
    const t = this.tallies;
    const live = this.open.openBytes();
    return { ...t, bytes: { fromActor: t.bytes.fromActor + live.fromActor, toActor: t.bytes.toActor + live.toActor } };
  }

  lifetime(): EgressView {
    return { tallies: { egressTunnels: { ...this.#lifetimeTallies(), grants: { revalidations: this.grants.lifetimeStats() } } }, connections: this.connections(), open: this.open, grants: this.grants };
  }

  sinceReset(): EgressView {
    return { tallies: { egressTunnels: { ...this.#sinceReset.current(), grants: { revalidations: this.grants.stats() } } }, connections: this.connections(), open: this.open, grants: this.grants };
  }

  reset(): void {
    this.#sinceReset.reset();
    this.grants.resetStats();
  }

  snapshot(): EgressStatsBlock {
    return statsBlock(EGRESS_STATS, this.sinceReset()).egressTunnels;
  }
}
