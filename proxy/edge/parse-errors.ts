/**
 * What a client gets when node's HTTP/1.1 parser cannot read what it sent (the engine's `'clientError'`): node's
 * own answer (431 for a head over the limit, 408 for a request not received in time, 400 otherwise), with these
 * exceptions:
 * - the bytes came after a request's `Connection: close`: that request is answered as any other, nothing after it
 *   is read, and the connection closes after its answer;
 * - the request being answered already has its answer's head out (or the error is in the body of a request
 *   refused before its body was read: node skips such a body): it got its one answer, and the connection is
 *   closed without a second once that answer is written (within `FLUSH_MS`: over TLS, an answer written behind a
 *   `100 Continue` may still be queued, and a close at once would drop it).
 * An answer of node's is followed by a lingering close: the connection is ended, what the client still sends is
 * read and dropped for a moment, then it is closed; a close right after the answer, with the client's bytes
 * unread, resets the connection (over TLS the answer is then lost).
 */
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { ClientConnection } from './client-connection.js';

/** How long a connection that got a parse-error answer is read from before it is closed. */
const LINGER_MS = 1000;
/** How long an answer still being written when the parser failed may take before its connection is closed anyway. */
const FLUSH_MS = 10_000;

const ANSWERS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

const HANDLED = Symbol('actor-edge.parse-error');
type ParsedSocket = Socket & { [HANDLED]?: true; _httpMessage?: ServerResponse | null };

export function onParseError(err: NodeJS.ErrnoException, socket: Socket): void {
  const s = socket as ParsedSocket;
  // node's parser reports every later chunk again: the first report decided.
  if (s[HANDLED] === true) return;
  s[HANDLED] = true;
  const last = ClientConnection.of(socket)?.lastExchange;
  const current = s._httpMessage ?? undefined;
  // Bytes after a request's `Connection: close` (RFC 9112 §9.6: no further request is processed on it): that request
  // is served as any other, and node closes the connection after its answer. No 400 in its place.
  if (err.code === 'HPE_CLOSED_CONNECTION' && stillWriting(current)) return;
  const answered = current?.headersSent === true || (last !== undefined && last.headersSent && !last.req.complete);
  if (answered || !socket.writable) {
    // An answer still on its way out (written behind an earlier write over TLS, or larger than the socket takes at
    // once) is let out first: destroying the socket now would drop it.
    const sending = current?.headersSent === true ? current : last;
    if (answered && socket.writable && stillWriting(sending)) {
      closeOnceSent(socket, sending);
      return;
    }
    socket.destroy();
    return;
  }
  socket.end(`HTTP/1.1 ${ANSWERS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** A response neither finished nor destroyed yet. */
function stillWriting(response: ServerResponse | undefined): response is ServerResponse {
  return response !== undefined && !response.writableFinished && !response.destroyed;
}

/** Closes the connection once `response` is written (or gone), and within `FLUSH_MS` whatever happens. */
function closeOnceSent(socket: Socket, response: ServerResponse): void {
  const timer = setTimeout(() => socket.destroy(), FLUSH_MS);
  timer.unref();
  const close = (): void => {
    clearTimeout(timer);
    socket.destroySoon();
  };
  response.once('finish', close);
  response.once('close', close);
}
