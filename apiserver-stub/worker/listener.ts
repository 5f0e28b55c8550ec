/**
 * The worker's HTTP/1.1 listener — plain, or mTLS when given a `WorkerTls` — which can be closed (new connections
 * refused, open keep-alive sockets and upgraded connections destroyed) and opened again on the same address.
 */
import http from 'node:http';
import https from 'node:https';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { formatHostPort } from '../../lib/address.js';
import { UPSTREAM_MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import type { WorkerTls } from './tls.js';

/** Longer than any client's idle keep-alive, so the client (not the worker) closes idle sockets. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export class WorkerListener {
  private server: http.Server | https.Server | null = null;
  private transition: Promise<void> = Promise.resolve();
  /** Upgraded connections (node's server no longer tracks them): closed with the listener. */
  private readonly upgraded = new Set<Duplex>();

  constructor(
    private readonly handler: http.RequestListener,
    private readonly host: string,
    private port: number,
    private readonly tls?: WorkerTls,
    /** Upgrade requests (the WebSocket echo, `websocket.ts`). */
    private readonly upgrade?: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void,
  ) {}

  get listening(): boolean {
    return this.server !== null;
  }

  /** host:port (the OS-chosen port once bound). */
  get address(): string {
    return formatHostPort(this.host, this.port);
  }

  get boundPort(): number {
    return this.port;
  }

  open(): Promise<void> {
    return this.serialise(async () => {
      if (this.server) return;
      // Every head the proxy forwards (its own limit plus what it adds) is accepted.
      const options = { noDelay: true, maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES };
      const tls = this.tls;
      let server: http.Server | https.Server;
      if (tls === undefined) {
        server = http.createServer(options, this.handler);
      } else {
        const secure = https.createServer({ ...options, ...tls.serverOptions() }, this.handler);
        tls.attach(secure, this.address);
        server = secure;
      }
      const upgrade = this.upgrade;
      if (upgrade !== undefined) {
        server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
          this.upgraded.add(socket);
          socket.once('close', () => this.upgraded.delete(socket));
          upgrade(req, socket, head);
        });
      }
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
      server.listen(this.port, this.host);
      await once(server, 'listening');
      const a = server.address();
      if (a && typeof a === 'object') this.port = a.port;
      this.server = server;
    });
  }

  close(): Promise<void> {
    return this.serialise(async () => {
      const server = this.server;
      if (!server) return;
      this.server = null;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of this.upgraded) socket.destroy();
      await closed;
    });
  }

  setListening(listening: boolean): Promise<void> {
    return listening ? this.open() : this.close();
  }

  private serialise(step: () => Promise<void>): Promise<void> {
    const next = this.transition.then(step);
    this.transition = next.catch(() => undefined);
    return next;
  }
}
