/**
 * extproc's egress mode: answers one CONNECT the proxy's egress listener forwarded (request headers whose
 * `xds.listener_direction` is OUTBOUND), in the platform gateway's order:
 * 1. the `source.certificate` attribute names an actor (else 403 invalid_certificate);
 * 2. GetActor: NOT_FOUND → 403 unknown_actor; neither RUNNING nor RESUMING → 403 not_running (the body names the
 *    state); UNAVAILABLE, DEADLINE_EXCEEDED or any other error → 503 unavailable (fail closed);
 * 3. the authority is `IP:port` (else 403 not_ip_authority);
 * 4. GetActorEgressPolicy: NOT_FOUND → no policy, denied; an error, or a policy the model cannot take → 503;
 * 5. the policy's verdict: allowed (CONTINUE with `actor_edge.egress` metadata: the rule that allows it, or the
 *    `hostnames` rules the proxy decides it by on the traffic) or 403 denied.
 * The caller going away at any point cancels the call under way; nothing is written (the stream is gone) and the
 * CONNECT is counted `cancelled`. No cache and no retry here: every CONNECT costs one GetActor and one
 * GetActorEgressPolicy (the data plane's egress cache is what saves them).
 */
import * as grpc from '@grpc/grpc-js';
import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { decideEgress, parseIpAuthority } from '../../lib/egress/policy.js';
import { policyOfMessage } from '../../lib/egress/policy-message.js';
import { encodeHostnameRules, type EgressOutcome } from '../../lib/egress/wire.js';
import type { ControlActor } from '../../lib/resume/control-client.js';
import { ATTR_ACTOR, ATTR_ATESPACE, ATTR_RESOLVE_OUTCOME } from '../../lib/tracing/attributes.js';
import type { ThrottledWarnings } from '../../lib/throttled-warnings.js';
import type { ExtprocMetrics } from '../metrics.js';
import type { ProcessingResponse } from '../protocol.js';
import type { EgressAttributes } from '../wire.js';
import { identityOfCertificate } from './certificate-identity.js';
import type { ControlReads, ReadResult } from './control-reads.js';
import { allowResponse, notRunningResponse, refusedResponse, type RefusedOutcome } from './egress-responses.js';

/** Actor states whose CONNECTs go on to the policy: RUNNING, and RESUMING (an activation under way already holds its certificate). */
const ADMITTED_STATES: ReadonlySet<string> = new Set(['STATUS_RUNNING', 'STATUS_RESUMING']);

export interface EgressResolverDeps {
  readonly reads: ControlReads;
  readonly metrics: ExtprocMetrics;
  readonly log: Logger;
  /** Warnings that would repeat on every CONNECT (a control plane answering what the policy model cannot take). */
  readonly warnings: ThrottledWarnings;
  /** The most both control-plane reads of one CONNECT may take together (the data plane's budget, when shorter, wins). */
  readonly timeoutMs: number;
}

interface Answer {
  readonly outcome: EgressOutcome;
  readonly response: ProcessingResponse;
}

function refused(outcome: RefusedOutcome): Answer {
  return { outcome, response: refusedResponse(outcome) };
}

/** A failed read: the caller's own cancel, or the control plane unable to answer (fail closed, 503). */
function failedRead(result: Extract<ReadResult<unknown>, { kind: 'error' }>, signal: AbortSignal): Answer {
  return refused(signal.aborted || result.code === grpc.status.CANCELLED ? 'cancelled' : 'unavailable');
}

export class EgressResolver {
  constructor(private readonly deps: EgressResolverDeps) {}

  /**
   * `authority`: the CONNECT's `:authority` (else `host`); `attributes`: what the message carried; `budgetMs`: what is
   * left of the data plane's budget for this CONNECT; `span` (tracing on): the stream's span.
   */
  async connect(authority: string, attributes: EgressAttributes, signal: AbortSignal, budgetMs?: number, span?: Span): Promise<ProcessingResponse> {
    const started = performance.now();
    let answer: Answer;
    try {
      answer = await this.decide(authority, attributes, signal, budgetMs, span);
    } catch (err) {
      this.deps.log.error({ err }, 'egress CONNECT failed');
      answer = refused('unavailable');
    }
    if (signal.aborted && answer.outcome !== 'cancelled') answer = refused('cancelled');
    this.deps.metrics.egressRequest(answer.outcome, (performance.now() - started) / 1000);
    span?.setAttributes({ [ATTR_RESOLVE_OUTCOME]: `egress_${answer.outcome}` });
    return answer.response;
  }

  private async decide(authority: string, attributes: EgressAttributes, signal: AbortSignal, budgetMs: number | undefined, span: Span | undefined): Promise<Answer> {
    const identity = identityOfCertificate(attributes.certificate);
    if (identity.kind === 'invalid') {
      this.deps.log.debug({ detail: identity.detail }, 'egress CONNECT: invalid certificate');
      return refused('invalid_certificate');
    }
    const ref = identity.actor;
    span?.setAttributes({ [ATTR_ACTOR]: ref.name, [ATTR_ATESPACE]: ref.atespace });
    const deadline = Date.now() + Math.min(this.deps.timeoutMs, budgetMs ?? Number.POSITIVE_INFINITY);

    const actorRead = await this.deps.reads.getActor(ref, deadline, signal);
    if (actorRead.kind === 'error') {
      if (actorRead.code === grpc.status.NOT_FOUND) return refused('unknown_actor');
      return failedRead(actorRead, signal);
    }
    const actor: ControlActor | null = actorRead.value;
    if (actor === null) return refused('unavailable');
    if (!ADMITTED_STATES.has(actor.status)) return { outcome: 'not_running', response: notRunningResponse(String(actor.status)) };

    const destination = parseIpAuthority(authority);
    if (destination === undefined) return refused('not_ip_authority');

    const policyRead = await this.deps.reads.getEgressPolicy(ref, deadline, signal);
    let verdict;
    let messageIndex: readonly number[] = [];
    if (policyRead.kind === 'error') {
      if (policyRead.code !== grpc.status.NOT_FOUND) return failedRead(policyRead, signal);
      verdict = decideEgress(undefined, destination);
    } else {
      const policy = policyOfMessage(policyRead.value.policy);
      if (policy.kind === 'invalid') {
        this.deps.warnings.warn('invalid-egress-policy', { actor: `${ref.atespace}/${ref.name}`, error: policy.error }, 'the control plane answered an egress policy that cannot be evaluated; CONNECTs answered 503');
        return refused('unavailable');
      }
      messageIndex = policy.messageIndex;
      verdict = decideEgress(policy.policy, destination);
    }
    if (verdict.kind === 'deny') return refused('denied');
    const who = { actor_id: actor.actor_id, atespace: ref.atespace, name: ref.name };
    if (verdict.kind === 'hostnames') {
      const rules = verdict.rules.map((r) => ({ rule: messageIndex[r.rule] ?? r.rule, hostnames: r.hostnames }));
      return { outcome: 'allowed', response: allowResponse({ verdict: 'hostnames', ...who, hostnames: encodeHostnameRules(rules) }) };
    }
    return { outcome: 'allowed', response: allowResponse({ verdict: 'allow', ...who, rule: messageIndex[verdict.rule] ?? verdict.rule }) };
  }
}
