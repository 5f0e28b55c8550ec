/**
 * One client connection as the ingress sees it: the request being served and the pipelined requests waiting
 * behind it. As in Envoy's HTTP/1 codec, a pipelined request is not processed until the response before it is
 * complete, so one connection never has more than one request in the chain or upstream. node:http parses and
 * emits pipelined requests all at once; they wait here, and once `PIPELINE_READ_LIMIT` wait the connection stops
 * being read until the queue is short again.
 */
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { ProxyRequest } from '../request/context.js';

/** Pipelined requests waiting on one connection before the proxy stops reading from it. */
export const PIPELINE_READ_LIMIT = 32;

const CONNECTION = Symbol('actor-edge.connection');
type TaggedSocket = Socket & { [CONNECTION]?: ClientConnection };

export class ClientConnection {
  /** The request being served (its response owns the socket), or undefined when the connection is idle. */
  current: ProxyRequest | undefined = undefined;
  /** Handed over as an upgraded connection (`upgrade.ts`): it drains with the tunnels, never as an idle one. */
  tunnel = false;
  /** The inner connection of a CONNECT tunnel (`connect-listener.ts`): its TLS, if any, was opened for the proxy. */
  insideConnect = false;
  /** The response of the request node's parser read last (its body may still be arriving: `parse-errors.ts`). */
  lastExchange: ServerResponse | undefined = undefined;
  #waiting: ProxyRequest[] | undefined;
  #readPaused = false;

  constructor(readonly socket: Socket) {
    (socket as TaggedSocket)[CONNECTION] = this;
  }

  static of(socket: Socket): ClientConnection | undefined {
    return (socket as TaggedSocket)[CONNECTION];
  }

  /** Queues a pipelined request behind the current one. */
  enqueue(ctx: ProxyRequest): void {
    const waiting = (this.#waiting ??= []);
    waiting.push(ctx);
    if (waiting.length >= PIPELINE_READ_LIMIT) {
      // Again on every request over the limit: node resumes the socket itself when a request body is read.
      this.#readPaused = true;
      this.socket.pause();
    }
  }

  /** Makes the next waiting request the current one and returns it (undefined: the connection is now idle). */
  advance(): ProxyRequest | undefined {
    const waiting = this.#waiting;
    const next = waiting === undefined || waiting.length === 0 ? undefined : waiting.shift();
    this.current = next;
    if (this.#readPaused && (waiting?.length ?? 0) < PIPELINE_READ_LIMIT / 2) {
      this.#readPaused = false;
      this.socket.resume();
    }
    return next;
  }

  /** The connection closed: every request on it (the current one first), leaving none. */
  takeAll(): ProxyRequest[] {
    const all = this.current === undefined ? [] : [this.current];
    if (this.#waiting !== undefined) all.push(...this.#waiting.splice(0));
    this.current = undefined;
    return all;
  }
}
