/**
 * Writes a streamed local reply body (`StreamedBody`) after its head, on any downstream exchange: one piece at a
 * time, each sent (and, when the client cannot take more, waited for: `whenWritable`) before the next is asked
 * for, so a slow client slows the source instead of filling memory. The end sends the trailers, if any (where the
 * response can carry them), and finishes the response. A source that breaks aborts the client's response (its
 * head is already out: HTTP/1.1 closes the connection, HTTP/2 resets the stream). What went wrong (a broken source,
 * trailers the client's protocol refuses) is handed to `note`, for the request's log line. A client that goes away
 * cancels the source.
 */
import type { StreamedBody } from '../api/filter.js';
import type { DownstreamExchange, TrailerPairs } from './exchange.js';

/** `sent` hears each piece's bytes as it is handed to the exchange (the access log's `bytesOut`). */
export function writeStreamedBody(exchange: DownstreamExchange, body: StreamedBody, note: (details: string) => void, sent?: (bytes: number) => void): void {
  let finished = false;
  /** Set while waiting for the client to take more: the exchange's close must end that wait too. */
  let waiting: (() => void) | undefined;
  const stop = (): void => {
    finished = true;
    body.cancel();
  };
  exchange.onClose(() => {
    if (!finished) stop();
    waiting?.();
  });
  const fail = (details: string): void => {
    stop();
    note(`streamed reply broke: ${details}`);
    exchange.abortResponse();
  };
  const writable = (): Promise<void> =>
    new Promise((resolve) => {
      waiting = resolve;
      exchange.whenWritable(() => {
        waiting = undefined;
        resolve();
      });
    });
  void (async () => {
    while (!finished) {
      const piece = await body.next();
      if (finished) return;
      if (exchange.gone) return stop();
      if (piece.kind === 'error') return fail(piece.details);
      if (piece.kind === 'end') {
        stop();
        return finish(exchange, piece.trailers, note);
      }
      const data = piece.data;
      sent?.(data.length);
      if (data.length > 0 && !exchange.sendBody(Buffer.from(data.buffer, data.byteOffset, data.byteLength))) await writable();
    }
  })().catch((err: unknown) => {
    if (!finished) fail((err as Error)?.message ?? String(err));
  });
}

/** Ends the response, with the trailers when there are any (a trailer the protocol refuses: ended without them). */
function finish(exchange: DownstreamExchange, trailers: Readonly<Record<string, string>> | undefined, note: (details: string) => void): void {
  const pairs: TrailerPairs = trailers === undefined ? [] : Object.entries(trailers);
  if (pairs.length === 0) return exchange.finishResponse();
  try {
    exchange.finishResponse(undefined, pairs);
  } catch (err) {
    note(`streamed reply trailers not sent: ${(err as Error).message}`);
    if (!exchange.gone) exchange.finishResponse();
  }
}
