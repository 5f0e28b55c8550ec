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
 * - to be decided on the traffic (policy.ts: only `hostnames` rules can allow this destination): the same CONTINUE
 *   with `{ verdict: "hostnames", actor_id, atespace, name, hostnames }`, `hostnames` the JSON text of those rules in
 *   policy order, `[{"rule": 2, "hostnames": ["api.example.com", "*.example.com"]}, ...]` (`encodeHostnameRules`).
 *   The proxy answers 200, reads the SNI or Host the actor sends, and allows it by the first rule that matches;
 *   cacheable as an allow is, the rules with it;
 * - otherwise an immediate response whose `details` names the outcome (`EGRESS_OUTCOMES`): the status and body the
 *   actor gets, and whether the verdict may be cached (only a policy's own denial is: an answer caused by the control
 *   plane, or by the actor's state, is asked again).
 */

import { checkHostnamePattern } from './hostname-pattern.js';
import type { HostnameCandidate } from './policy.js';

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

/** What a CONNECT to be decided on the traffic carries. */
export interface EgressHostnamesMetadata {
  readonly verdict: 'hostnames';
  readonly actor_id: string;
  readonly atespace: string;
  readonly name: string;
  /** The rules that may allow it, in policy order: `encodeHostnameRules`. */
  readonly hostnames: string;
}

export type EgressContinueMetadata = EgressAllowMetadata | EgressHostnamesMetadata;

/** The longest `hostnames` text the proxy takes (a policy holds at most 4096 patterns of at most 253 bytes). */
export const MAX_HOSTNAME_RULES_TEXT = 2 * 1024 * 1024;

export function encodeHostnameRules(rules: readonly HostnameCandidate[]): string {
  return JSON.stringify(rules.map((r) => ({ rule: r.rule, hostnames: r.hostnames })));
}

/**
 * The rules a `hostnames` text carries, checked: a non-empty list, rule indexes increasing, each with 1 to 1024 valid
 * patterns (lowered); or why it is not one.
 */
export function decodeHostnameRules(text: string): readonly HostnameCandidate[] | string {
  if (text.length > MAX_HOSTNAME_RULES_TEXT) return 'hostnames text too long';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'hostnames is not JSON';
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > 256) return 'hostnames is not a list of 1 to 256 rules';
  const rules: HostnameCandidate[] = [];
  for (const item of value as unknown[]) {
    const { rule, hostnames } = (item ?? {}) as { rule?: unknown; hostnames?: unknown };
    if (typeof rule !== 'number' || !Number.isInteger(rule) || rule < 0 || rule <= (rules.at(-1)?.rule ?? -1)) return 'hostnames rule indexes are not increasing whole numbers';
    if (!Array.isArray(hostnames) || hostnames.length === 0 || hostnames.length > 1024) return `hostnames rule ${rule} has not 1 to 1024 patterns`;
    const patterns = hostnames.map(checkHostnamePattern);
    if (patterns.some((p) => p === undefined)) return `hostnames rule ${rule} has a pattern that is not a hostname pattern`;
    rules.push({ rule, hostnames: patterns as string[] });
  }
  return rules;
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
