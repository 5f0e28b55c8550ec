/**
 * What an HTTP/1.1 client must see for the requests it sent on one connection: the connection was made, the wait
 * ended with the answers or a close (never stuck), what arrived reads as well-formed answers (no more than the
 * requests), requests a conforming client could send were answered (not only closed on), and no answer carries the
 * worker-only `x-ate-assignment-stale`.
 */
import type { Http1Outcome } from './http1-client.js';

export interface SentRequest {
  readonly id: string;
  readonly wellFormed: boolean;
  /** The bytes start like HTTP/2's preface (the proxy reads the connection as HTTP/2, not HTTP/1.1). */
  readonly prefaceLike: boolean;
}

export function http1Problems(out: Http1Outcome, sent: readonly SentRequest[]): string[] {
  if (out.connectError !== undefined) return [`connect: ${out.connectError}`];
  const problems: string[] = [];
  if (out.stuck !== undefined) problems.push(`stuck: ${out.stuck}`);
  if (sent[0]?.prefaceLike === true) return problems;
  const { reading } = out;
  if (reading.problem !== undefined) problems.push(`malformed answer: ${reading.problem}`);
  // Only when every request on the connection is well-formed: a malformed one behind it may end the connection
  // before the first is answered (node's parser fails the whole connection).
  if (sent.length > 0 && sent.every((r) => r.wellFormed) && reading.answers.length === 0) {
    problems.push(`the well-formed request ${sent[0]?.id} got no answer (${out.closed ? 'closed' : 'open'}, ${out.bytes.length} byte(s))`);
  }
  for (const a of reading.answers) {
    if (a.headers.some(([n]) => n === 'x-ate-assignment-stale') || a.trailers.some(([n]) => n === 'x-ate-assignment-stale')) problems.push(`answer ${a.status} carries x-ate-assignment-stale`);
  }
  return problems;
}
