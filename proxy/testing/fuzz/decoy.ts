/**
 * An address only clients name: a TCP listener on loopback that records every connection it gets. Fuzz cases put
 * its `host:port` wherever a client could try to choose the upstream (Host, `:authority`, an absolute-form or
 * CONNECT target, the internal routing headers); the proxy connects only where ext_proc or its cache said, so a
 * connection here is a finding.
 */
import net from 'node:net';
import { boundAddress } from '../../../lib/address.js';

export class Decoy {
  /** Connections accepted since the last `take()`, each with the first bytes it sent (up to 200). */
  readonly #connections: string[] = [];
  readonly #sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly address: string,
  ) {
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      const index = this.#connections.push('') - 1;
      socket.on('data', (c: Buffer) => {
        if ((this.#connections[index] ?? '').length < 200) this.#connections[index] += c.toString('latin1').slice(0, 200);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<Decoy> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Decoy(server, boundAddress(server));
  }

  get port(): number {
    return Number(this.address.slice(this.address.lastIndexOf(':') + 1));
  }

  /** The connections since the last call (the first bytes of each), and forgets them. */
  take(): string[] {
    return this.#connections.splice(0);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
