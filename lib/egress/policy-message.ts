/**
 * An egress policy as ateapi's `EgressPolicy` message carries it (proto/ateapi/ateapi.proto, in @grpc/proto-loader's
 * shape: snake_case, int64 as a string, an empty `ports` list for every port), and the conversions between that
 * message and the policy model (policy.ts): the control-plane simulator encodes what it stores, extproc decodes what
 * the control plane answers. Pure.
 */
import { parseEgressPolicy, type CheckedEgressPolicy, type EgressRule } from './policy.js';

export interface EgressRuleMessage {
  readonly kind: string;
  readonly cidrs: readonly string[];
  /** Empty: every port. */
  readonly ports: readonly number[];
  readonly hostnames: readonly string[];
}

export interface EgressPolicyMessage {
  readonly atespace: string;
  readonly name: string;
  readonly rules: readonly EgressRuleMessage[];
  /** int64, as a decimal string. */
  readonly generation: string;
}

export interface GetActorEgressPolicyResponse {
  readonly policy: EgressPolicyMessage | null;
}

function ruleMessage(rule: EgressRule): EgressRuleMessage {
  const ports = rule.ports === 'all' ? [] : rule.ports;
  switch (rule.kind) {
    case 'cidrs':
      return { kind: 'cidrs', cidrs: rule.cidrs, ports, hostnames: [] };
    case 'hostnames':
      return { kind: 'hostnames', cidrs: [], ports, hostnames: rule.hostnames };
    case 'all':
      return { kind: 'all', cidrs: [], ports, hostnames: [] };
  }
}

/** The message for a stored policy of actor `atespace/name`. */
export function egressPolicyMessage(atespace: string, name: string, policy: CheckedEgressPolicy, generation: number): EgressPolicyMessage {
  return { atespace, name, rules: policy.rules.map(ruleMessage), generation: String(generation) };
}

export type PolicyOfMessage =
  | { readonly kind: 'policy'; readonly policy: CheckedEgressPolicy; readonly generation: number;
      /** For each rule of `policy`, its index in the message (every rule is kept: the same index). */
      readonly messageIndex: readonly number[] }
  | { readonly kind: 'invalid'; readonly error: string };

/** The policy a control plane answered, checked as a client's would be (each rule as its kind reads it). */
export function policyOfMessage(message: EgressPolicyMessage | null | undefined): PolicyOfMessage {
  if (message === null || message === undefined) return { kind: 'invalid', error: 'the response carries no policy' };
  const rules: readonly (EgressRuleMessage | null | undefined)[] = Array.isArray(message.rules) ? message.rules : [];
  const messageIndex = rules.map((_r, i) => i);
  try {
    const policy = parseEgressPolicy({
      rules: rules.map((r) => {
        const ports = Array.isArray(r?.ports) && r.ports.length > 0 ? r.ports : 'all';
        if (r?.kind === 'cidrs') return { kind: 'cidrs', cidrs: r.cidrs, ports };
        if (r?.kind === 'hostnames') return { kind: 'hostnames', hostnames: r.hostnames, ports };
        return { kind: r?.kind, ports };
      }),
    });
    const generation = Number(message.generation);
    return { kind: 'policy', policy, generation: Number.isSafeInteger(generation) ? generation : 0, messageIndex };
  } catch (err) {
    return { kind: 'invalid', error: (err as Error).message };
  }
}
