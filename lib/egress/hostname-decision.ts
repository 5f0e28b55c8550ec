/**
 * A tunnel decided on its traffic (policy.ts's `hostnames` verdict): what its first bytes (first-bytes.ts) decide
 * with the rules that may allow it. Allowed by the first rule whose patterns match the SNI or Host; otherwise refused,
 * by reason:
 * - `no_sni`: a TLS ClientHello without a server_name;
 * - `no_match`: a name no rule matches (a name that is not a DNS name, an IP literal say, matches none);
 * - `unknown_protocol`: neither a TLS ClientHello nor an HTTP/1.1 request;
 * - `malformed`: a ClientHello or request head that breaks its format, or ends before it is complete;
 * - `timeout`: not decided within the time allowed;
 * - `too_large`: not decided within the bytes allowed.
 * Pure.
 */
import type { FirstBytesAnswer } from './first-bytes.js';
import { observedName } from './hostname-pattern.js';
import { decideHostname, type HostnameCandidate } from './policy.js';

export type HostnameRefusal = 'no_sni' | 'no_match' | 'unknown_protocol' | 'malformed' | 'timeout' | 'too_large';
export const HOSTNAME_REFUSALS: readonly HostnameRefusal[] = Object.freeze(['no_sni', 'no_match', 'unknown_protocol', 'malformed', 'timeout', 'too_large']);

/** Where an allowed name came from: a ClientHello's SNI, or a request's Host. */
export type HostnameSource = 'sni' | 'host';
export const HOSTNAME_SOURCES: readonly HostnameSource[] = Object.freeze(['sni', 'host']);

export type HostnameDecision =
  | { readonly kind: 'allow'; readonly rule: number; readonly name: string; readonly by: HostnameSource }
  /** `name`: the name the actor sent, as it sent it (`no_match`); `detail`: what was wrong (`malformed`). */
  | { readonly kind: 'refuse'; readonly reason: HostnameRefusal; readonly name?: string; readonly detail?: string };

const refuse = (reason: HostnameRefusal, extra: { name?: string; detail?: string } = {}): HostnameDecision => ({ kind: 'refuse', reason, ...extra });

/** The decision for a reader's answer; `need-more` is what the reader had when the time ran out (`timeout`). */
export function decideOnTraffic(answer: FirstBytesAnswer, rules: readonly HostnameCandidate[]): HostnameDecision {
  switch (answer.kind) {
    case 'sni':
    case 'host': {
      const rule = decideHostname(rules, observedName(answer.name));
      return rule === undefined ? refuse('no_match', { name: answer.name }) : { kind: 'allow', rule, name: answer.name, by: answer.kind };
    }
    case 'no-sni':
      return refuse('no_sni');
    case 'unknown-protocol':
      return refuse('unknown_protocol');
    case 'malformed':
      return refuse('malformed', { detail: `${answer.protocol}: ${answer.detail}` });
    case 'too-large':
      return refuse('too_large');
    case 'need-more':
      return refuse('timeout');
  }
}
