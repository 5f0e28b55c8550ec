/**
 * Test helper: one request written as raw lines on a fresh connection, and the whole answer read until the
 * connection closes (the request carries `Connection: close` unless it names its own Connection).
 */
import net from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

export async function rawExchange(hostPort: string, lines: readonly string[]): Promise<RawAnswer> {
  const colon = hostPort.lastIndexOf(':');
  const socket = net.connect(Number(hostPort.slice(colon + 1)), hostPort.slice(0, colon));
  const hasConnection = lines.some((l) => /^connection:/i.test(l));
  socket.write(`${[...lines, ...(hasConnection ? [] : ['Connection: close'])].join('\r\n')}\r\n\r\n`);
  const text = await new Promise<string>((resolve, reject) => {
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (data += c));
    socket.once('end', () => resolve(data));
    socket.once('error', reject);
  });
  socket.destroy();
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  let body = end === -1 ? '' : text.slice(end + 4);
  if (/\r\ntransfer-encoding: chunked/i.test(head)) body = dechunk(body);
  return { status, head, body };
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
