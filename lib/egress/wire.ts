/**
 * The egress contract between the proxy's egress listener and extproc's egress mode, over the unchanged ext_proc v3
 * stream: what the proxy sends for one CONNECT, and what each answer means (and whether the proxy may cache it).
 *
 * The proxy sends one `request_headers` message (`:method CONNECT`, `:authority` and `host` the `IP:port`,
 * `end_of_stream: true`) with two attributes under `envoy.filters.http.ext_proc`, as Envoy would:
 * - `source.certificate`: the actor's verified leaf certificate, PEM (the form agentgateway passes);
 * - `xds.listener_direction`: 2, Envoy's `TrafficDirection.OUTBOUND` (extproc dispatches on it: absent or 1 is the
 *   ingress path).
 *
 * extproc answers:
 * - allowed: `request_headers` CONTINUE with dynamic metadata `actor_edge.egress` = `{ verdict: "allow",
 *   actor_id, atespace, name, rule }` (`rule`: the index of the rule that matched);
 * - otherwise an immediate response whose `details` names the outcome (`EGRESS_OUTCOMES`): the status and body the
 *   actor gets, and whether the verdict may be cached (only a policy's own denial is: an answer caused by the control
 *   plane, or by the actor's state, is asked again).
 */

/** Envoy's `core.v3.TrafficDirection.OUTBOUND`, as the `xds.listener_direction` attribute carries it. */
export const OUTBOUND_DIRECTION = 2;
export const DIRECTION_ATTRIBUTE = 'xds.listener_direction';
export const SOURCE_CERTIFICATE_ATTRIBUTE = 'source.certificate';

/** The dynamic-metadata namespace of an allowed CONNECT. */
export const EGRESS_METADATA_NAMESPACE = 'actor_edge.egress';

/** What an allowed CONNECT's metadata carries. */
export interface EgressAllowMetadata {
  readonly verdict: 'allow';
  readonly actor_id: string;
  readonly atespace: string;
  readonly name: string;
  /** Index of the policy rule that matched. */
  readonly rule: number;
}

export type EgressOutcome =
  | 'allowed'
  | 'denied'
  | 'invalid_certificate'
  | 'unknown_actor'
  | 'not_running'
  | 'not_ip_authority'
  | 'unavailable'
  | 'cancelled';

export interface EgressOutcomeSpec {
  readonly status: number;
  /** The body the actor gets (`not_running` adds the state: "actor is STATUS_SUSPENDED, not running"). */
  readonly body: string;
  /** The immediate response's `details`. */
  readonly details: string;
  /** May the proxy cache this verdict (for `--egress-cache-ttl-ms`, never past the certificate's expiry)? */
  readonly cacheable: boolean;
}

export const EGRESS_OUTCOMES: Readonly<Record<EgressOutcome, EgressOutcomeSpec>> = Object.freeze({
  allowed: { status: 200, body: '', details: 'actor_edge_egress_allowed', cacheable: true },
  denied: { status: 403, body: 'egress denied', details: 'actor_edge_egress_denied', cacheable: true },
  invalid_certificate: { status: 403, body: 'invalid actor certificate', details: 'actor_edge_egress_invalid_certificate', cacheable: false },
  unknown_actor: { status: 403, body: 'unknown actor', details: 'actor_edge_egress_unknown_actor', cacheable: false },
  not_running: { status: 403, body: 'actor is not running', details: 'actor_edge_egress_not_running', cacheable: false },
  not_ip_authority: { status: 403, body: 'egress denied', details: 'actor_edge_egress_not_ip_authority', cacheable: false },
  unavailable: { status: 503, body: 'control plane unavailable', details: 'actor_edge_egress_unavailable', cacheable: false },
  cancelled: { status: 408, body: 'request cancelled', details: 'actor_edge_egress_cancelled', cacheable: false },
});

const BY_DETAILS: ReadonlyMap<string, EgressOutcome> = new Map(
  (Object.keys(EGRESS_OUTCOMES) as EgressOutcome[]).map((o) => [EGRESS_OUTCOMES[o].details, o]),
);

/** The outcome an immediate response's `details` names; undefined for details this contract does not define. */
export function egressOutcomeOf(details: string | undefined): EgressOutcome | undefined {
  return details === undefined ? undefined : BY_DETAILS.get(details);
}
