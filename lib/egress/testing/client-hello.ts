/**
 * TLS ClientHellos for tests: built field by field (any SNI, extensions, a field made wrong on purpose), cut into
 * records of chosen sizes, or captured from node's own TLS client.
 */
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import tls from 'node:tls';

export interface HelloOptions {
  /** The host_name of a server_name extension; null: no server_name extension. */
  readonly sni?: string | null;
  /** The server_name extension's entries as given (instead of `sni`). */
  readonly serverNames?: readonly { readonly type: number; readonly name: string }[];
  /** Extensions before the server_name one. */
  readonly before?: readonly { readonly type: number; readonly data: Uint8Array }[];
  /** Extensions after it. */
  readonly after?: readonly { readonly type: number; readonly data: Uint8Array }[];
  /** No extensions block at all. */
  readonly noExtensions?: boolean;
  readonly sessionId?: Uint8Array;
  readonly cipherSuites?: readonly number[];
  readonly version?: readonly [number, number];
}

const u16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const u24 = (n: number): number[] => [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];

function extension(type: number, data: Uint8Array | number[]): number[] {
  return [...u16(type), ...u16(data.length), ...data];
}

export function serverNameData(entries: readonly { readonly type: number; readonly name: string }[]): number[] {
  const list = entries.flatMap((e) => {
    const name = [...Buffer.from(e.name, 'latin1')];
    return [e.type, ...u16(name.length), ...name];
  });
  return [...u16(list.length), ...list];
}

/** The handshake message: type 1, its length, the ClientHello body. */
export function clientHelloMessage(opts: HelloOptions = {}): Buffer {
  const sessionId = opts.sessionId ?? new Uint8Array(32).fill(7);
  const suites = (opts.cipherSuites ?? [0x1301, 0x1302, 0xc02f]).flatMap(u16);
  const body: number[] = [...(opts.version ?? [3, 3]), ...new Array<number>(32).fill(0x2a), sessionId.length, ...sessionId, ...u16(suites.length), ...suites, 1, 0];
  if (!opts.noExtensions) {
    const names = opts.serverNames ?? (opts.sni === null || opts.sni === undefined ? undefined : [{ type: 0, name: opts.sni }]);
    const exts = [
      ...(opts.before ?? []).flatMap((e) => extension(e.type, e.data)),
      ...(names === undefined ? [] : extension(0, serverNameData(names))),
      ...(opts.after ?? [{ type: 43, data: new Uint8Array([2, 3, 4]) }]).flatMap((e) => extension(e.type, e.data)),
    ];
    body.push(...u16(exts.length), ...exts);
  }
  return Buffer.from([1, ...u24(body.length), ...body]);
}

/** `message` in handshake records whose fragments are `sizes` long in turn (the last size repeats; default one record). */
export function inRecords(message: Uint8Array, sizes: readonly number[] = [16384], version: readonly [number, number] = [3, 1]): Buffer {
  const out: number[] = [];
  for (let at = 0, i = 0; at < message.length; i++) {
    const size = Math.max(1, Math.min(sizes[Math.min(i, sizes.length - 1)] as number, 16384, message.length - at));
    out.push(22, ...version, ...u16(size), ...message.subarray(at, at + size));
    at += size;
  }
  return Buffer.from(out);
}

/** A ClientHello with `sni`, in one record. */
export function clientHello(sni: string | null, opts: HelloOptions = {}): Buffer {
  return inRecords(clientHelloMessage({ ...opts, sni }));
}

/** The first record node's TLS client sends for `options` (its ClientHello), caught by a loopback TCP server. */
export async function nodeClientHello(options: tls.ConnectionOptions): Promise<Buffer> {
  let caught: (bytes: Buffer) => void = () => undefined;
  const result = new Promise<Buffer>((resolve) => (caught = resolve));
  const server = net.createServer((socket) => {
    let got = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 5 && got.length >= 5 + got.readUInt16BE(3)) {
        caught(got.subarray(0, 5 + got.readUInt16BE(3)));
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, rejectUnauthorized: false, ...options });
  client.on('error', () => undefined);
  try {
    return await result;
  } finally {
    client.destroy();
    server.close();
  }
}
