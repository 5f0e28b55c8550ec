/**
 * ext_proc message round trips as the proxy's ext_proc client measures them: from writing one message on a
 * `Process` stream to its answer, the stream's end, the message timeout or the request going away. The client
 * reports each one here (`observe`); `/metrics` attaches the histogram
 * `actor_edge_proxy_extproc_round_trip_seconds{message,result}` (ops/metrics.ts), so the client needs nothing
 * but the counters it already has.
 */

/** Which ProcessingRequest it was (the oneof member that was set). */
export type ExtProcMessageKind = 'request_headers' | 'request_body' | 'request_trailers' | 'response_headers' | 'response_body' | 'response_trailers' | 'other';
export const EXT_PROC_MESSAGE_KINDS: readonly ExtProcMessageKind[] = Object.freeze([
  'request_headers',
  'request_body',
  'request_trailers',
  'response_headers',
  'response_body',
  'response_trailers',
  'other',
]);

/** How the wait ended (the ext_proc client's exchange result kinds). */
export type RoundTripResult = 'response' | 'closed' | 'error' | 'timeout' | 'aborted';

export type RoundTripSink = (message: ExtProcMessageKind, result: RoundTripResult, seconds: number) => void;

/** The oneof member set on a ProcessingRequest. */
export function messageKindOf(message: Readonly<Record<string, unknown>>): ExtProcMessageKind {
  for (const kind of EXT_PROC_MESSAGE_KINDS) if (message[kind] != null) return kind;
  return 'other';
}

export class ExtProcRoundTrips {
  #sink: RoundTripSink | undefined;

  /** Where round trips go from now on (the metrics' histogram). */
  attach(sink: RoundTripSink): void {
    this.#sink = sink;
  }

  observe(message: ExtProcMessageKind, result: RoundTripResult, seconds: number): void {
    this.#sink?.(message, result, seconds);
  }
}
