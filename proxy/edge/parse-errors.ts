/**
 * What a client gets when node's HTTP/1.1 parser cannot read what it sent (the engine's `'clientError'`): node's
 * own answer (431 for a head over the limit, 408 for a request not received in time, 400 otherwise) — unless the
 * error is in the body of a request already answered (refused before its body was read: node skips such a body),
 * which got its one answer: the connection is closed without a second. An answer is followed by a lingering
 * close: the connection is ended, what the client still sends is read and dropped for a moment, then it is
 * closed; a close right after the answer, with the client's bytes unread, resets the connection (over TLS the
 * answer is then lost).
 */
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { ClientConnection } from './client-connection.js';

/** How long a connection that got a parse-error answer is read from before it is closed. */
const LINGER_MS = 1000;

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
  const answered = s._httpMessage?.headersSent === true || (last !== undefined && last.headersSent && !last.req.complete);
  if (answered || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`HTTP/1.1 ${ANSWERS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
