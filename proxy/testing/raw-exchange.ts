/**
 * Test helper: one exchange written raw on a fresh connection, and what the server wrote back until it closed the
 * connection (or `waitMs` passed). The request is either the exact bytes to send, or the request's lines (then
 * joined, ended with an empty line, and given `Connection: close` unless they name their own Connection).
 */
import net from 'node:net';

export interface RawAnswer {
  /** The status of the first response (0 when none came). */
  readonly status: number;
  readonly head: string;
  /** The first response's body (de-chunked). */
  readonly body: string;
  /** Everything the server wrote. */
  readonly raw: string;
}

export async function rawExchange(hostPort: string, request: string | readonly string[], waitMs = 3000): Promise<RawAnswer> {
  const colon = hostPort.lastIndexOf(':');
  const socket = net.connect(Number(hostPort.slice(colon + 1)), hostPort.slice(0, colon));
  let data: string;
  if (typeof request === 'string') data = request;
  else {
    const hasConnection = request.some((l) => /^connection:/i.test(l));
    data = `${[...request, ...(hasConnection ? [] : ['Connection: close'])].join('\r\n')}\r\n\r\n`;
  }
  let raw = '';
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => (raw += c));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(data);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', () => undefined);
  });
  socket.destroy();
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  let body = end === -1 ? '' : raw.slice(end + 4);
  if (/\r\ntransfer-encoding: chunked/i.test(head)) body = dechunk(body);
  return { status, head, body, raw };
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, nl), 16);
    if (!(size > 0)) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}
