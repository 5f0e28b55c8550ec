/**
 * The process-wide budget of request-body bytes retained for replay (`--replay-buffer-budget-bytes`). Every
 * `RequestBody` (`body.ts`) takes each chunk it keeps from here; a chunk that does not fit makes its body stream
 * through without replay from then on (the body cannot be re-run once its bytes were sent; `chain/rerun.ts`
 * already answers such a request as not replayable), and that body is counted. Bytes come back as the body drops
 * them: once they were forwarded and the body can no longer be replayed, once the response head is relayed (no
 * re-run can follow), and at the latest when the request finishes. So the retained bytes of every request together
 * stay within the budget whatever the concurrency, and the budget only moves the point at which a body stops
 * being replayable: it never refuses or delays one.
 *
 * Plain numbers, bumped on the request path; `/stats` and `/metrics` read them.
 */
export class ReplayBudget {
  /** `--replay-buffer-budget-bytes`; 0: no process-wide budget (each body is bounded by its own limit only). */
  readonly capacity: number;
  #inUse = 0;
  #bodies = 0;
  /** Bodies that stopped being retained because the budget was spent (they streamed through without replay). */
  streamedWithoutReplay = 0;
  /**
   * Bodies a filter (`readBody`) or a BUFFERED processor had to read whole while the budget had no room: answered
   * 503 `PROXY_ERR_OVERLOADED` (a whole-body read cannot stream through).
   */
  bufferedRefused = 0;
  /** Bytes taken beyond the capacity because they had to be kept (a processor's body mutation replacing a buffered body). */
  forcedBytes = 0;

  constructor(capacity: number) {
    if (!(capacity >= 0)) throw new RangeError('the replay budget must be 0 or more bytes');
    this.capacity = capacity;
  }

  /** Bytes retained now by every body together. */
  get inUseBytes(): number {
    return this.#inUse;
  }

  /** Bodies holding some of the budget now. */
  get bodies(): number {
    return this.#bodies;
  }

  /** Takes `bytes` when they fit (always, with no capacity); false when the budget is spent. */
  tryAcquire(bytes: number): boolean {
    if (this.capacity > 0 && this.#inUse + bytes > this.capacity) return false;
    this.#inUse += bytes;
    return true;
  }

  /** Takes `bytes` whether they fit or not (bytes that must be kept); what goes beyond the capacity is counted. */
  force(bytes: number): void {
    const over = this.capacity > 0 ? Math.max(0, this.#inUse + bytes - Math.max(this.capacity, this.#inUse)) : 0;
    this.forcedBytes += over;
    this.#inUse += bytes;
  }

  /** Returns `bytes` taken earlier. */
  release(bytes: number): void {
    this.#inUse -= bytes;
  }

  /** A body started holding bytes (`holding` true) or stopped (false). */
  holding(holding: boolean): void {
    this.#bodies += holding ? 1 : -1;
  }

  /** A body stopped being retained because the budget was spent. */
  countStreamed(): void {
    this.streamedWithoutReplay++;
  }
}
