/**
 * The worker's listener, which can be closed (new connections refused, open connections — upgraded ones included —
 * destroyed) and opened again on the same address. One port speaks HTTP/1.1 (the actor's HTTP app, WebSocket
 * upgrades) and HTTP/2 (gRPC). Plain, the two are told apart by the connection preface (h2c with prior knowledge,
 * `lib/preface-sniff.ts`); with a `WorkerTls` (mTLS), by the ALPN protocol the client negotiated (`h2` or
 * `http/1.1`; a client that offers none speaks HTTP/1.1).
 */
import http from 'node:http';
import http2, { type ServerHttp2Session } from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { formatHostPort } from '../../lib/address.js';
import { UPSTREAM_MAX_HEADER_BYTES } from '../../lib/http-limits.js';
import { sniffProtocol, type WireProtocol } from '../../lib/preface-sniff.js';
import type { StreamHandler } from './stream-handler.js';
import type { WorkerTls } from './tls.js';

/** Longer than any client's idle keep-alive, so the client (not the worker) closes idle sockets. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface WorkerListenerOptions {
  /** mTLS on the port; plain when absent. */
  readonly tls?: WorkerTls | undefined;
  /** Upgrade requests (the WebSocket echo, `websocket.ts`). */
  readonly upgrade?: ((req: http.IncomingMessage, socket: Duplex, head: Buffer) => void) | undefined;
  /** HTTP/2 streams (gRPC, `stream-handler.ts`); without it the port speaks HTTP/1.1 only. */
  readonly streamHandler?: StreamHandler | undefined;
}

interface Engines {
  readonly front: net.Server;
  readonly http1: http.Server;
  /** Every accepted connection (raw sockets), destroyed on close. */
  readonly sockets: Set<net.Socket>;
}

export class WorkerListener {
  private engines: Engines | null = null;
  private transition: Promise<void> = Promise.resolve();

  constructor(
    private readonly handler: http.RequestListener,
    private readonly host: string,
    private port: number,
    private readonly options: WorkerListenerOptions = {},
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
      const { tls: workerTls, upgrade, streamHandler } = this.options;
      // Every head the proxy forwards (its own limit plus what it adds) is accepted.
      const http1 = http.createServer({ noDelay: true, maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES }, this.handler);
      http1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      http1.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
      http1.emit('listening'); // starts node's connection bookkeeping (the front server does the listening)
      if (upgrade !== undefined) http1.on('upgrade', upgrade);
      const h2 = http2.createServer({ settings: { maxHeaderListSize: UPSTREAM_MAX_HEADER_BYTES }, maxHeaderListPairs: 2000 });
      if (streamHandler !== undefined) h2.on('stream', streamHandler);
      h2.on('session', (session: ServerHttp2Session) => session.on('error', () => undefined));
      const dispatch = (socket: net.Socket, protocol: WireProtocol): void => {
        if (protocol === 'h2' && streamHandler !== undefined) {
          h2.emit('connection', socket);
          return;
        }
        http1.emit('connection', socket);
        socket.resume();
      };
      let front: net.Server;
      if (workerTls === undefined) {
        front = net.createServer({ noDelay: true }, (socket) => {
          sniffProtocol(socket, KEEP_ALIVE_TIMEOUT_MS, (protocol) => dispatch(socket, protocol));
        });
      } else {
        const alpn = streamHandler === undefined ? ['http/1.1'] : ['h2', 'http/1.1'];
        const secure = tls.createServer({ ...workerTls.serverOptions(), ALPNProtocols: alpn, noDelay: true });
        workerTls.attach(secure, this.address); // registered first: a refused identity is destroyed before dispatch
        secure.on('secureConnection', (socket: tls.TLSSocket) => {
          if (socket.destroyed) return;
          dispatch(socket, socket.alpnProtocol === 'h2' ? 'h2' : 'http/1.1');
        });
        front = secure;
      }
      const sockets = new Set<net.Socket>();
      front.on('connection', (socket: net.Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
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
