/**
 * One undici keep-alive Pool per upstream worker address. Pools are created on first use for a literal `ip:port`
 * (never a name: nothing is resolved through DNS) and closed when they have been idle for a whole sweep interval.
 *
 * Each pool is bounded like an Envoy cluster's circuit breakers: at most `maxConnections` connections to the
 * worker (one request each), and at most `maxPending` requests waiting for one of them. A request beyond both is
 * refused by `admit()` before anything is sent (the router answers 503 `PROXY_ERR_UPSTREAM_OVERFLOW`).
 */
import { Pool, type buildConnector, type Dispatcher } from 'undici';
import { isLiteralAddress } from '../http/route-address.js';
import { UnsentList } from './unsent-list.js';

export interface PoolOptions {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Idle time between upstream body chunks before the response is abandoned. */
  readonly bodyTimeoutMs: number;
  readonly maxHeaderBytes: number;
  /** How often idle pools are closed (0: never). */
  readonly sweepIntervalMs: number;
  /** Connections to one worker at most. */
  readonly maxConnections: number;
  /** Requests waiting for a connection to one worker at most. */
  readonly maxPending: number;
  /** Opens each new connection (mTLS, `upstream/tls.ts`); absent: plain TCP. */
  readonly connector?: buildConnector.connector;
}

/** What the router dispatches a request through: an undici pool or client, or the HTTP/2 session (`h2-dispatcher.ts`). */
export interface UpstreamDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/** One worker's pool and the requests it holds (running or queued), counted by the router. */
export class WorkerPool {
  used = true;
  #outstanding = 0;
  /** Requests handed to the pool that have not started writing (queued, or waiting for a connection). */
  readonly unsent = new UnsentList();

  constructor(
    readonly pool: UpstreamDispatcher,
    /** Running plus queued requests at most: connections + pending. */
    readonly limit: number,
  ) {}

  /** Takes a slot for one request; false when every connection is busy and the queue is full (an overflow). */
  admit(): boolean {
    if (this.#outstanding >= this.limit) return false;
    this.#outstanding++;
    return true;
  }

  /** Gives back the slot of a request undici is done with (completed, failed or aborted). */
  release(): void {
    this.#outstanding--;
  }

  get outstanding(): number {
    return this.#outstanding;
  }

  /** Fails at once every request not sent yet (the worker's address went down). */
  ejectUnsent(): void {
    for (const a of this.unsent.takeAll()) a.eject();
  }
}

/** Builds the dispatcher for one worker; returns it and how many requests it may hold (running plus queued). */
export type CreateDispatcher = (address: string, opts: PoolOptions) => { readonly dispatcher: UpstreamDispatcher; readonly limit: number };

/** The HTTP/1.1 keep-alive pool of one worker (over mTLS when `opts.connector` is given). */
export const createHttp1Pool: CreateDispatcher = (address, opts) => ({
  dispatcher: new Pool(`${opts.connector === undefined ? 'http' : 'https'}://${address}`, {
    connections: opts.maxConnections,
    pipelining: 1,
    connect: opts.connector ?? { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    maxHeaderSize: opts.maxHeaderBytes,
  }),
  limit: opts.maxConnections + opts.maxPending,
});

export class UpstreamPools {
  readonly #entries = new Map<string, WorkerPool>();
  readonly #opts: PoolOptions;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #create: CreateDispatcher;

  /** `create`: the dispatcher per worker (default: an HTTP/1.1 pool). */
  constructor(opts: PoolOptions, create: CreateDispatcher = createHttp1Pool) {
    this.#opts = opts;
    this.#create = create;
    if (opts.sweepIntervalMs > 0) {
      this.#timer = setInterval(() => this.#sweep(), opts.sweepIntervalMs);
      this.#timer.unref();
    }
  }

  /** The pool for `address`; undefined when the address is not a literal `ip:port`. */
  get(address: string): WorkerPool | undefined {
    const hit = this.#entries.get(address);
    if (hit !== undefined) {
      hit.used = true;
      return hit;
    }
    if (!isLiteralAddress(address)) return undefined;
    const { dispatcher, limit } = this.#create(address, this.#opts);
    const entry = new WorkerPool(dispatcher, limit);
    this.#entries.set(address, entry);
    return entry;
  }

  /** The pool for `address` if there is one (none is created). */
  peek(address: string): WorkerPool | undefined {
    return this.#entries.get(address);
  }

  get size(): number {
    return this.#entries.size;
  }

  #sweep(): void {
    for (const [address, entry] of this.#entries) {
      if (entry.used) {
        entry.used = false;
        continue;
      }
      if (entry.outstanding > 0) continue;
      this.#entries.delete(address);
      void entry.pool.close().catch(() => undefined);
    }
  }

  /** Waits for running requests, then closes every connection. */
  async close(): Promise<void> {
    await Promise.all(this.#takeAll().map((p) => p.close().catch(() => undefined)));
  }

  /** Closes every connection at once (in-flight requests fail). */
  async destroy(): Promise<void> {
    await Promise.all(this.#takeAll().map((p) => p.destroy().catch(() => undefined)));
  }

  #takeAll(): UpstreamDispatcher[] {
    if (this.#timer) clearInterval(this.#timer);
    const pools = [...this.#entries.values()].map((e) => e.pool);
    this.#entries.clear();
    return pools;
  }
}
