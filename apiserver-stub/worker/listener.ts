/**
 * The worker's listener, which can be closed (new connections refused, open connections destroyed) and opened
 * again on the same address. One port speaks HTTP/1.1 (the actor's HTTP app) and HTTP/2 with prior knowledge
 * (h2c: gRPC), told apart by the connection preface (`lib/preface-sniff.ts`).
 */
import http from 'node:http';
import http2, { type ServerHttp2Session } from 'node:http2';
import net from 'node:net';
import { once } from 'node:events';
import { formatHostPort } from '../../lib/address.js';
import { UPSTREAM_MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { sniffProtocol } from '../../lib/preface-sniff.js';
import type { StreamHandler } from './stream-handler.js';

/** Longer than any client's idle keep-alive, so the client (not the worker) closes idle sockets. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

interface Engines {
  readonly front: net.Server;
  readonly http1: http.Server;
  readonly sockets: Set<net.Socket>;
}

export class WorkerListener {
  private engines: Engines | null = null;
  private transition: Promise<void> = Promise.resolve();

  constructor(
    private readonly handler: http.RequestListener,
    private readonly host: string,
    private port: number,
    private readonly streamHandler?: StreamHandler,
  ) {}

  get listening(): boolean {
    return this.engines !== null;
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
      if (this.engines) return;
      // Every head the proxy forwards (its own limit plus what it adds) is accepted.
      const http1 = http.createServer({ noDelay: true, maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES }, this.handler);
      http1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      http1.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
      http1.emit('listening'); // starts node's connection bookkeeping (the front server does the listening)
      const sockets = new Set<net.Socket>();
      const h2 = http2.createServer({ settings: { maxHeaderListSize: UPSTREAM_MAX_HEADER_BYTES }, maxHeaderListPairs: 2000 });
      const streamHandler = this.streamHandler;
      if (streamHandler !== undefined) h2.on('stream', streamHandler);
      h2.on('session', (session: ServerHttp2Session) => session.on('error', () => undefined));
      const front = net.createServer({ noDelay: true }, (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        sniffProtocol(socket, KEEP_ALIVE_TIMEOUT_MS, (protocol) => {
          if (protocol === 'h2' && streamHandler !== undefined) {
            h2.emit('connection', socket);
            return;
          }
          http1.emit('connection', socket);
          socket.resume();
        });
      });
      front.listen(this.port, this.host);
      await once(front, 'listening');
      const a = front.address();
      if (a && typeof a === 'object') this.port = a.port;
      this.engines = { front, http1, sockets };
    });
  }

  close(): Promise<void> {
    return this.serialise(async () => {
      const engines = this.engines;
      if (!engines) return;
      this.engines = null;
      const closed = new Promise<void>((resolve) => engines.front.close(() => resolve()));
      engines.http1.close();
      for (const socket of engines.sockets) socket.destroy();
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
