/**
 * Reads the first bytes of a tunnel decided on its traffic, from the actor's side after its 200 (the bytes it sent
 * early, past its CONNECT head, first), until they decide (lib/egress/first-bytes.ts) or the limits run out:
 * `timeoutMs` from the 200, `maxBytes` read. Nothing is sent to the actor and nothing is dialled meanwhile. The
 * answer is the decision (lib/egress/hostname-decision.ts) with every byte read, to be forwarded first and untouched
 * when it allows; or `gone` when the actor closed (or ended without sending anything) first. Whatever the answer,
 * the actor's side is left paused, with no listener of this module on it. Never throws.
 */
import { FirstBytesReader } from '../../lib/egress/first-bytes.js';
import { decideOnTraffic, type HostnameDecision } from '../../lib/egress/hostname-decision.js';
import type { HostnameCandidate } from '../../lib/egress/policy.js';
import type { AcceptedConnect } from './egress-request.js';

export interface HostnameLimits {
  /** `--egress-sni-timeout-ms`. */
  readonly timeoutMs: number;
  /** `--egress-sni-max-bytes`. */
  readonly maxBytes: number;
}

export type GateResult = (HostnameDecision & { readonly head: Buffer }) | { readonly kind: 'gone' };

export function readHostname(side: AcceptedConnect, rules: readonly HostnameCandidate[], limits: HostnameLimits): Promise<GateResult> {
  const stream = side.stream;
  const reader = new FirstBytesReader(limits.maxBytes);
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: GateResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.pause();
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onClose);
      resolve(result);
    };
    const decided = (decision: HostnameDecision): void => finish({ ...decision, head: reader.bytes() });
    const onData = (chunk: Buffer): void => {
      const answer = reader.push(chunk);
      if (answer.kind !== 'need-more') decided(decideOnTraffic(answer, rules));
    };
    // An actor that ends before its first bytes decide has sent all it will: too little.
    const onEnd = (): void => (reader.length === 0 ? finish({ kind: 'gone' }) : decided({ kind: 'refuse', reason: 'malformed', detail: 'the actor ended its side before its first bytes were complete' }));
    const onClose = (): void => finish({ kind: 'gone' });
    const timer = setTimeout(() => decided(decideOnTraffic(reader.answer, rules)), limits.timeoutMs);
    if (stream.destroyed) return finish({ kind: 'gone' });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('close', onClose);
    if (side.head.length > 0) onData(side.head);
    if (!done) stream.resume();
  });
}
