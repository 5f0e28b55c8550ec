/**
 * extproc's answers to an egress CONNECT, per lib/egress/wire.ts: allowed is a request-headers CONTINUE with the
 * `actor_edge.egress` dynamic metadata; every other outcome is an immediate response with the contract's status,
 * body and details (encoded once; `not_running` names the actor's state in its body).
 */
import { EGRESS_METADATA_NAMESPACE, EGRESS_OUTCOMES, type EgressContinueMetadata, type EgressOutcome } from '../../lib/egress/wire.js';
import { encodeResponse, structValueFields, type ProcessingResponse } from '../protocol.js';
import { immediateResponse } from '../responses.js';

const VALUE = structValueFields();

/**
 * CONTINUE, with what the proxy records of an allowed CONNECT (`allow`: its rule), or of one it decides on the
 * traffic (`hostnames`: the rules that may allow it).
 */
export function allowResponse(allow: EgressContinueMetadata): ProcessingResponse {
  const text = (value: string) => ({ [VALUE.string]: value });
  const decision = allow.verdict === 'allow' ? { rule: { [VALUE.number]: allow.rule } } : { hostnames: text(allow.hostnames) };
  return encodeResponse({
    request_headers: { response: { status: 'CONTINUE' } },
    dynamic_metadata: {
      fields: {
        [EGRESS_METADATA_NAMESPACE]: {
          [VALUE.struct]: {
            fields: {
              verdict: text(allow.verdict),
              actor_id: text(allow.actor_id),
              atespace: text(allow.atespace),
              name: text(allow.name),
              ...decision,
            },
          },
        },
      },
    },
  });
}

export type RefusedOutcome = Exclude<EgressOutcome, 'allowed'>;

const REFUSED: Readonly<Record<RefusedOutcome, ProcessingResponse>> = Object.freeze(
  Object.fromEntries(
    (Object.keys(EGRESS_OUTCOMES) as EgressOutcome[])
      .filter((o): o is RefusedOutcome => o !== 'allowed')
      .map((o) => {
        const spec = EGRESS_OUTCOMES[o];
        return [o, encodeResponse(immediateResponse(spec.status, spec.body, spec.details) as Record<string, unknown>)];
      }),
  ) as Record<RefusedOutcome, ProcessingResponse>,
);

/** The immediate response of a refused CONNECT. */
export function refusedResponse(outcome: RefusedOutcome): ProcessingResponse {
  return REFUSED[outcome];
}

/** 403 for an actor that is not running: the body names its state ("actor is STATUS_SUSPENDED, not running"). */
export function notRunningResponse(status: string): ProcessingResponse {
  const spec = EGRESS_OUTCOMES.not_running;
  return immediateResponse(spec.status, `actor is ${status}, not running`, spec.details);
}
