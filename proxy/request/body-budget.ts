/**
 * The process-wide budget of request bodies in flight (`--body-inflight-budget-bytes`): bodies the proxy has begun
 * to take from clients and not yet received whole. A body in flight holds memory the proxy cannot bound by its
 * size: what node read from the client's socket and buffered in the request stream, the chunk being written, the
 * upstream socket's write buffer (about `BODY_RESERVATION_BYTES` together however large the body), and it holds it
 * for as long as its client and upstream take. So each request with a body reserves its share when it arrives: its
 * declared `Content-Length` when that is smaller, `BODY_RESERVATION_BYTES` otherwise (a chunked body included). A
 * request whose share does not fit is answered 503 `PROXY_ERR_OVERLOADED` with `Retry-After` at once, its body
 * unread and its connection closed after the answer (counted: `/stats` `overload.shed.bodyBudget`). The share
 * goes back when the whole body has been received (what was received is then the replay budget's, at most
 * `--replay-buffer-budget-bytes`), or when the request ends first. Memory of bodies in flight is then bounded by
 * the budget whatever the number of concurrent uploads, as Envoy bounds it with per-connection buffer limits and
 * its overload manager, and the uploads beyond it cost a refused request each rather than their bytes.
 *
 * Every body's bytes are also counted by the process's `GcPacer` (`lib/gc-pacer.ts`): a young-generation collection
 * after every `BODY_GC_EVERY_BYTES` received, so the chunks already forwarded do not wait seconds for the collector.
 *
 * Plain numbers, bumped on the request path; `/stats` and `/metrics` read them.
 */
import type { GcPacer } from '../../lib/gc-pacer.js';

/** One body in flight's hold on the budget (`RequestBody` reports to it). */
export interface BodyFlight {
  /** `bytes` more of the body were received from the client. */
  received(bytes: number): void;
  /** The body is no longer in flight (received whole, failed, or the request ended): its share goes back. Idempotent. */
  settled(): void;
}

/** Request-body bytes between two young-generation collections (`lib/gc-pacer.ts`). */
export const BODY_GC_EVERY_BYTES = 32 * 2 ** 20;

/**
 * What one body in flight may hold in the proxy: node's socket read (64 KiB) and request stream buffer (16 KiB),
 * the chunk being forwarded (up to 64 KiB) and the upstream socket's write buffer (16 KiB and the chunk queued
 * past it), rounded up.
 */
export const BODY_RESERVATION_BYTES = 256 * 1024;


export class BodyBudget {
  /** `--body-inflight-budget-bytes`; 0: no budget (every body admitted). */
  readonly capacity: number;
  #inUse = 0;
  #bodies = 0;
  /** Requests answered 503 because their body's share did not fit. */
  refused = 0;

  readonly #pacer: GcPacer | undefined;

  /** `pacer`: counts every body's bytes (absent: none). */
  constructor(capacity: number, pacer?: GcPacer) {
    if (!(capacity >= 0)) throw new RangeError('the body budget must be 0 or more bytes');
    this.capacity = capacity;
    this.#pacer = pacer;
  }

  /** The share a body reserves: its declared length when smaller than `BODY_RESERVATION_BYTES`. */
  static shareOf(contentLength: number | undefined): number {
    return contentLength !== undefined && contentLength >= 0 && contentLength < BODY_RESERVATION_BYTES ? contentLength : BODY_RESERVATION_BYTES;
  }

  /** Bytes reserved now by every body in flight together. */
  get inUseBytes(): number {
    return this.#inUse;
  }

  /** Bodies in flight now. */
  get bodies(): number {
    return this.#bodies;
  }

  /**
   * Reserves the share of a body of `contentLength` (undefined: unknown); answers the body's flight (its share goes
   * back at `settled()`), or undefined when the share does not fit (counted as refused).
   */
  admit(contentLength: number | undefined): BodyFlight | undefined {
    const share = BodyBudget.shareOf(contentLength);
    if (this.capacity > 0 && this.#inUse + share > this.capacity) {
      this.refused++;
      return undefined;
    }
    this.#inUse += share;
    this.#bodies++;
    let released = false;
    const pacer = this.#pacer;
    return {
      received: (bytes) => pacer?.add(bytes),
      settled: () => {
        if (released) return;
        released = true;
        this.#inUse -= share;
        this.#bodies--;
      },
    };
  }
}
