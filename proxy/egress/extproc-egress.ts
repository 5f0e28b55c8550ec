/**
 * The egress slow path: one ext_proc `Process` stream per CONNECT, on the proxy's ext_proc channel, as
 * `lib/egress/wire.ts` defines it. One `request_headers` message (`:method CONNECT`, `:authority` and `host` the
 * destination, `end_of_stream`), with the `source.certificate` (the actor's verified leaf, PEM) and
 * `xds.listener_direction` (2, outbound) attributes; the first answer decides:
 * - `request_headers` CONTINUE with `actor_edge.egress` metadata `{ verdict: "allow", actor_id, atespace, name, rule }`:
 *   allowed (cacheable); with `{ verdict: "hostnames", actor_id, atespace, name, hostnames }`: to be decided on the
 *   traffic by those rules (cacheable, the rules with it; a `hostnames` text that is not valid is 503);
 * - an immediate response: the outcome its `details` names (`EGRESS_OUTCOMES`: its status, its body — the
 *   processor's own when it sent a short printable one, e.g. the actor's state — and whether it may be cached);
 * - anything else, a stream error, the processor ending the stream, or no answer within the deadline: 503
 *   `control plane unavailable`, never cached. The actor going away first: 408 `request cancelled`, never cached.
 * Then the stream is half-closed (reset at once when its message is still unanswered).
 */
import { decodeHostnameRules, EGRESS_METADATA_NAMESPACE, EGRESS_OUTCOMES, egressOutcomeOf, DIRECTION_ATTRIBUTE, OUTBOUND_DIRECTION, SOURCE_CERTIFICATE_ATTRIBUTE, type EgressOutcome } from '../../lib/egress/wire.js';
import { ATTRIBUTES_KEY } from '../stages/ext-proc/attributes.js';
import type { MessageResult, ExtProcClient, ExtProcStream } from '../stages/ext-proc/client.js';
import type { ProcessingRequest, ProcessingResponse, StructValue } from '../stages/ext-proc/messages.js';
import type { EgressVerdict, Resolution } from './verdict-cache.js';

/** One CONNECT as ext_proc is asked about it. */
export interface EgressQuestion {
  /** The normalised `IP:port`. */
  readonly destination: string;
  /** The actor's leaf certificate, PEM. */
  readonly certificatePem: string;
}

export interface EgressAskOptions {
  /** `--egress-extproc-timeout-ms`: the answer's deadline (also sent as the stream's budget metadata). */
  readonly timeoutMs: number;
  /** Aborted when the actor goes away: the stream is cancelled. */
  readonly signal?: AbortSignal | undefined;
}

/** The slow path's answer, with what it was (`outcome`) and, when the processor did not decide, why (`detail`). */
export interface EgressAnswer extends Resolution {
  readonly outcome: EgressOutcome;
  readonly detail?: string;
}

/** The one message of an egress stream. */
export function egressRequestMessage(q: EgressQuestion): ProcessingRequest {
  const header = (key: string, value: string) => ({ key, raw_value: Buffer.from(value, 'latin1') });
  return {
    request_headers: {
      headers: { headers: [header(':method', 'CONNECT'), header(':authority', q.destination), header('host', q.destination)] },
      end_of_stream: true,
    },
    attributes: {
      [ATTRIBUTES_KEY]: {
        fields: {
          [SOURCE_CERTIFICATE_ATTRIBUTE]: { kind: 'stringValue', stringValue: q.certificatePem },
          [DIRECTION_ATTRIBUTE]: { kind: 'numberValue', numberValue: OUTBOUND_DIRECTION },
        },
      },
    },
  };
}

function denial(outcome: Exclude<EgressOutcome, 'allowed'>, body?: string, detail?: string): EgressAnswer {
  const spec = EGRESS_OUTCOMES[outcome];
  const verdict: EgressVerdict = { kind: 'deny', status: spec.status, body: body ?? spec.body, outcome };
  return { verdict, cacheable: spec.cacheable, outcome, ...(detail === undefined ? {} : { detail }) };
}

const unavailable = (detail: string): EgressAnswer => denial('unavailable', undefined, detail);

/** A body the processor sent that may go to the actor as it is: short, printable ASCII. */
const PRINTABLE = /^[\x20-\x7e]{1,256}$/;

function bodyOf(raw: Buffer | Uint8Array | undefined): string | undefined {
  if (raw === undefined || raw.length === 0 || raw.length > 256) return undefined;
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1');
  return PRINTABLE.test(text) ? text : undefined;
}

const str = (v: StructValue | undefined): string | undefined => (typeof v?.stringValue === 'string' && (v.kind === undefined || v.kind === 'stringValue') ? v.stringValue : undefined);

/** The allow verdict an answer's `actor_edge.egress` metadata carries, or why it is not one. */
function allowOf(m: ProcessingResponse): EgressVerdict | string {
  const ns = m.dynamic_metadata?.fields?.[EGRESS_METADATA_NAMESPACE];
  const fields = ns?.structValue?.fields;
  if (fields == null) return `CONTINUE without ${EGRESS_METADATA_NAMESPACE} metadata`;
  const verdict = str(fields.verdict);
  const actorId = str(fields.actor_id);
  const atespace = str(fields.atespace);
  const name = str(fields.name);
  const rule = fields.rule?.numberValue;
  if (verdict !== 'allow' && verdict !== 'hostnames') return `${EGRESS_METADATA_NAMESPACE} verdict is neither "allow" nor "hostnames"`;
  if (actorId === undefined || atespace === undefined || name === undefined) return `${EGRESS_METADATA_NAMESPACE} lacks actor_id, atespace or name`;
  if (verdict === 'hostnames') {
    const rules = decodeHostnameRules(str(fields.hostnames) ?? '');
    if (typeof rules === 'string') return `${EGRESS_METADATA_NAMESPACE} ${rules}`;
    return { kind: 'hostnames', actorId, atespace, name, rules };
  }
  if (typeof rule !== 'number' || !Number.isInteger(rule) || rule < 0) return `${EGRESS_METADATA_NAMESPACE} rule is not a rule index`;
  return { kind: 'allow', actorId, atespace, name, rule };
}

/** What the first answer (or the stream's end) means. */
export function egressAnswerOf(result: MessageResult): EgressAnswer {
  switch (result.kind) {
    case 'timeout':
      return unavailable('ext_proc message timeout');
    case 'closed':
      return unavailable('ext_proc ended the stream without an answer');
    case 'error':
      return unavailable(`ext_proc stream error ${result.code}: ${result.details}`);
    case 'aborted':
      return unavailable('ext_proc did not answer in time');
    case 'response':
      break;
  }
  const m = result.response;
  if (m.immediate_response != null) {
    const outcome = egressOutcomeOf(m.immediate_response.details);
    if (outcome === undefined || outcome === 'allowed') return unavailable(`immediate response with details ${JSON.stringify(m.immediate_response.details ?? '')}`);
    return denial(outcome, bodyOf(m.immediate_response.body));
  }
  if (m.request_headers != null) {
    const status = m.request_headers.response?.status;
    if (status !== undefined && status !== 'CONTINUE') return unavailable(`request_headers answer with status ${status}`);
    const allow = allowOf(m);
    if (typeof allow === 'string') return unavailable(allow);
    return { verdict: allow, cacheable: EGRESS_OUTCOMES.allowed.cacheable, outcome: 'allowed' };
  }
  return unavailable(`an answer that is neither request_headers nor immediate_response (${m.response ?? 'empty'})`);
}

/** Asks ext_proc about one CONNECT; never throws. */
export async function askExtProcEgress(client: ExtProcClient, q: EgressQuestion, opts: EgressAskOptions): Promise<EgressAnswer> {
  const gone = opts.signal;
  const isGone = (): boolean => gone?.aborted === true;
  if (isGone()) return denial('cancelled');
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  const signal = gone === undefined ? deadline.signal : AbortSignal.any([deadline.signal, gone]);
  let stream: ExtProcStream | undefined;
  try {
    stream = client.open({ budgetMs: opts.timeoutMs });
    const result = await stream.roundTrip(egressRequestMessage(q), signal);
    if (result.kind === 'aborted') return isGone() ? denial('cancelled') : unavailable(`no ext_proc answer within ${opts.timeoutMs} ms`);
    return egressAnswerOf(result);
  } catch (err) {
    return unavailable(`ext_proc stream could not be used: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    stream?.close();
  }
}
