/**
 * What the exchanges report about the connection a request came on (`http/exchange.ts` `ConnectionInfo`), read
 * from the socket when first asked (ext_proc attributes and the access log ask; the hit path does not). Each
 * connection gets a number of its own, unique within this process.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ConnectionInfo } from '../http/exchange.js';

let nextConnectionId = 1;
const ids = new WeakMap<Socket, number>();

function idOf(socket: Socket): number {
  let id = ids.get(socket);
  if (id === undefined) ids.set(socket, (id = nextConnectionId++));
  return id;
}

export function connectionInfo(socket: Socket | null | undefined, httpVersion: string): ConnectionInfo {
  const tls = socket as TLSSocket | null | undefined;
  const encrypted = tls?.encrypted === true;
  const name = encrypted ? (tls as TLSSocket & { servername?: string | false }).servername : undefined;
  return {
    remoteAddress: socket?.remoteAddress ?? '',
    remotePort: socket?.remotePort,
    localAddress: socket?.localAddress,
    localPort: socket?.localPort,
    encrypted,
    httpVersion,
    id: socket === null || socket === undefined ? 0 : idOf(socket),
    serverName: typeof name === 'string' && name !== '' ? name : undefined,
    tlsVersion: encrypted ? ((tls as TLSSocket).getProtocol() ?? undefined) : undefined,
  };
}
