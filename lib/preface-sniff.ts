/**
 * One plaintext port for HTTP/1.1 and HTTP/2 with prior knowledge (h2c): the first bytes a client sends tell them
 * apart. An HTTP/2 client starts with the connection preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (RFC 9113 §3.4);
 * no HTTP/1.1 request line starts with `PRI `. The bytes read to decide are put back on the socket, which is then
 * handed to the HTTP/1.1 or the HTTP/2 server as a new connection.
 */
import type { Socket } from 'node:net';

export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Bytes that decide: `PRI ` is no HTTP/1.1 method followed by a space. */
const DECIDING_BYTES = 4;

export type WireProtocol = 'http/1.1' | 'h2';

/** The protocol the first bytes announce, or undefined when too few bytes arrived to tell. */
export function protocolOf(head: Buffer): WireProtocol | undefined {
  const n = Math.min(head.length, DECIDING_BYTES);
  for (let i = 0; i < n; i++) if (head[i] !== HTTP2_PREFACE[i]) return 'http/1.1';
  return n < DECIDING_BYTES ? undefined : 'h2';
}

/**
 * Reads the first bytes of `socket`, puts them back, and calls `dispatch` with the protocol they announce. A
 * socket that sends nothing for `timeoutMs`, or ends its side first (a TCP health check: connect, then FIN), is
 * destroyed without a dispatch (it would otherwise stay half-open until the timeout, holding its place under
 * `--max-connections`); one that closes first is forgotten.
 */
export function sniffProtocol(socket: Socket, timeoutMs: number, dispatch: (protocol: WireProtocol) => void): void {
  let head: Buffer = Buffer.alloc(0);
  const done = (): void => {
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.off('end', onEnd);
    socket.off('error', ignore);
    clearTimeout(timer);
  };
  const onData = (chunk: Buffer): void => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const protocol = protocolOf(head);
    if (protocol === undefined) return;
    done();
    socket.pause();
    socket.unshift(head);
    dispatch(protocol);
  };
  const onClose = (): void => done();
  const onEnd = (): void => {
    done();
    socket.destroy();
  };
  const timer = setTimeout(() => {
    done();
    socket.destroy();
  }, timeoutMs);
  timer.unref();
  socket.on('data', onData);
  socket.once('close', onClose);
  socket.once('end', onEnd);
  socket.on('error', ignore); // until a server owns the socket
}

function ignore(): void {}
