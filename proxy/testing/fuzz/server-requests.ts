/**
 * Every HTTP/1.1 request any node:http server in this process receives, as node's parser read it (the
 * `http.server.request.start` diagnostics channel: the raw header list before any handler ran), with the local
 * address it arrived at. In-process workers (apiserver-stub's) are node:http servers, so this is what each worker
 * was sent, without changing the worker.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { formatHostPort } from '../../../lib/address.js';

export interface ServerRequest {
  /** `ip:port` the request arrived at. */
  readonly at: string;
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
}

const CHANNEL = 'http.server.request.start';

export class ServerRequests {
  readonly #seen: ServerRequest[] = [];
  readonly #onStart = (message: unknown): void => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    const at = formatHostPort(socket.localAddress ?? '?', socket.localPort ?? 0);
    this.#seen.push({ at, method: request.method ?? '', url: request.url ?? '', rawHeaders: [...request.rawHeaders] });
  };

  constructor() {
    dc.subscribe(CHANNEL, this.#onStart);
  }

  /** The requests recorded since the last call (and forgets them). */
  take(): ServerRequest[] {
    return this.#seen.splice(0);
  }

  stop(): void {
    dc.unsubscribe(CHANNEL, this.#onStart);
  }
}
