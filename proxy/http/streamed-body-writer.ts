/**
 * Writes a streamed local reply body (`StreamedBody`) after its head: one piece at a time, each written (and, when
 * the client's buffer is full, drained) before the next is asked for, so a slow client slows the source instead of
 * filling memory. The end writes the trailers, if any, and ends the response. A source that breaks resets the
 * client's response (HTTP/1.1: the connection closes; HTTP/2: the stream is reset), since its head is already out;
 * the request is logged as truncated with the reason. A client that goes away cancels the source.
 */
import type { StreamedBody } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';

/** Resolves once `res` can take more, or has closed. */
function drained(res: ProxyRequest['res']): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

export function writeStreamedBody(ctx: ProxyRequest, body: StreamedBody): void {
  const res = ctx.res;
  let finished = false;
  const stop = (): void => {
    finished = true;
    body.cancel();
  };
  res.once('close', () => {
    if (!finished) stop();
  });
  const fail = (details: string): void => {
    stop();
    ctx.responseState = 'truncated';
    ctx.details = `${ctx.details === undefined ? '' : `${ctx.details}; `}streamed reply broke: ${details}`;
    res.destroy();
  };
  void (async () => {
    while (!finished) {
      const piece = await body.next();
      if (finished) return;
      if (piece.kind === 'error') return fail(piece.details);
      if (piece.kind === 'end') {
        if (piece.trailers !== undefined && Object.keys(piece.trailers).length > 0) res.addTrailers(piece.trailers);
        finished = true;
        res.end();
        body.cancel();
        return;
      }
      if (piece.data.length > 0 && !res.write(piece.data)) await drained(res);
    }
  })().catch((err: unknown) => {
    if (!finished) fail((err as Error)?.message ?? String(err));
  });
}
