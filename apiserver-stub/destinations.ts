/**
 * Destinations outside the platform for actors' egress, simulated on this host (on loopback, or on an address of
 * one of its interfaces: a container's own on a network the egress gateway reaches): plain TCP servers that answer
 * every HTTP/1.1 request with `200` and a line naming the destination (`destination <name> <ip:port>`), and close
 * after it when the client asked to. Anything else a client sends is read and dropped, and the connection is closed after
 * the head limit, so a tunnel to one of them carries real bytes both ways without the destination trusting them.
 */
import net, { type Server, type Socket } from 'node:net';
import { formatHostPort, type HostPort } from '../lib/address.js';

const HEAD_LIMIT = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

export interface Destination {
  readonly name: string;
  /** `ip:port` as a CONNECT names it. */
  readonly address: string;
}

function answer(socket: Socket, text: string, close: boolean): void {
  const body = Buffer.from(text, 'utf8');
  socket.write(
    `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n${close ? 'connection: close\r\n' : ''}\r\n`,
  );
  socket.write(body);
  if (close) socket.end();
}

/** Serves one connection: each complete head gets an answer; `Connection: close` (or HTTP/1.0) ends it. */
function serve(socket: Socket, line: string): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf(HEAD_END);
      if (end === -1) {
        if (pending.length > HEAD_LIMIT) socket.destroy();
        return;
      }
      const head = pending.subarray(0, end).toString('latin1');
      pending = pending.subarray(end + HEAD_END.length);
      const close = /^connection:\s*close\s*$/im.test(head) || / HTTP\/1\.0$/m.test(head.split('\r\n', 1)[0] ?? '');
      answer(socket, line, close);
      if (close) return;
    }
  });
}

export class Destinations {
  private constructor(
    private readonly servers: readonly Server[],
    private readonly sockets: Set<Socket>,
    readonly list: readonly Destination[],
  ) {}

  /** Starts one destination at each of `at` (port 0 picks one), named `destination-1` … in that order. */
  static async start(at: readonly HostPort[]): Promise<Destinations> {
    const servers: Server[] = [];
    const list: Destination[] = [];
    const sockets = new Set<Socket>();
    try {
      for (const [i, { host, port: wanted }] of at.entries()) {
        const name = `destination-${i + 1}`;
        const server = net.createServer();
        await new Promise<void>((resolve, reject) => {
          server.once('error', (err: NodeJS.ErrnoException) => {
            const why = err.code === 'EADDRNOTAVAIL' ? 'not an address of this host' : err.code === 'EADDRINUSE' ? 'the port is in use' : (err.code ?? err.message);
            reject(new Error(`${name}: cannot listen on ${formatHostPort(host, wanted)} (${why})`, { cause: err }));
          });
          server.listen(wanted, host, () => resolve());
        });
        const port = (server.address() as net.AddressInfo).port;
        const address = formatHostPort(host, port);
        const line = `destination ${name} ${address}\n`;
        server.on('connection', (socket: Socket) => {
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
          serve(socket, line);
        });
        servers.push(server);
        list.push(Object.freeze({ name, address }));
      }
    } catch (err) {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      throw err;
    }
    return new Destinations(servers, sockets, Object.freeze(list));
  }

  /** The ready line's entries: `destination-1` → `ip:port`, …. */
  addresses(): Record<string, string> {
    return Object.fromEntries(this.list.map((d) => [d.name, d.address]));
  }

  /** Stops listening and ends every connection a tunnel left open. */
  close(): Promise<void> {
    const closed = Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    for (const socket of this.sockets) socket.destroy();
    return closed.then(() => undefined);
  }
}
