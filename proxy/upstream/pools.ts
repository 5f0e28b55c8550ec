/**
 * One undici keep-alive Pool per upstream worker address. Pools are created on first use for a literal `ip:port`
 * (never a name: nothing is resolved through DNS) and closed when they have been idle for a whole sweep interval.
 */
import { Pool, type buildConnector } from 'undici';
import { isLiteralAddress } from './route-address.js';

export interface PoolOptions {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Idle time between upstream body chunks before the response is abandoned. */
  readonly bodyTimeoutMs: number;
  readonly maxHeaderBytes: number;
  /** How often idle pools are closed (0: never). */
  readonly sweepIntervalMs: number;
  /** Opens each new connection (mTLS, `upstream/tls.ts`); absent: plain TCP. */
  readonly connector?: buildConnector.connector;
}

interface Entry {
  readonly pool: Pool;
  used: boolean;
}

export class UpstreamPools {
  readonly #entries = new Map<string, Entry>();
  readonly #opts: PoolOptions;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(opts: PoolOptions) {
    this.#opts = opts;
    if (opts.sweepIntervalMs > 0) {
      this.#timer = setInterval(() => this.#sweep(), opts.sweepIntervalMs);
      this.#timer.unref();
    }
  }

  /** The pool for `address`; undefined when the address is not a literal `ip:port`. */
  get(address: string): Pool | undefined {
    const hit = this.#entries.get(address);
    if (hit !== undefined) {
      hit.used = true;
      return hit.pool;
    }
    if (!isLiteralAddress(address)) return undefined;
    const connector = this.#opts.connector;
    const pool = new Pool(`${connector === undefined ? 'http' : 'https'}://${address}`, {
      connections: null,
      pipelining: 1,
      connect: connector ?? { timeout: this.#opts.connectTimeoutMs },
      headersTimeout: this.#opts.headersTimeoutMs,
      bodyTimeout: this.#opts.bodyTimeoutMs,
      maxHeaderSize: this.#opts.maxHeaderBytes,
    });
    this.#entries.set(address, { pool, used: true });
    return pool;
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
      const s = entry.pool.stats;
      if (s.pending > 0 || s.running > 0) continue;
      this.#entries.delete(address);
      void entry.pool.close().catch(() => undefined);
    }
  }

  /** Waits for running requests, then closes every connection. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    const pools = [...this.#entries.values()].map((e) => e.pool);
    this.#entries.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }

  /** Closes every connection at once (in-flight requests fail). */
  async destroy(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    const pools = [...this.#entries.values()].map((e) => e.pool);
    this.#entries.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}
