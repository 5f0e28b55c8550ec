/**
 * The client's request body, read once and forwarded by one attempt at a time.
 *
 * Chunks are read from the client only as fast as the current attempt's upstream takes them (backpressure), and
 * every chunk is retained while the body so far fits within `--max-replay-body-bytes`. As long as nothing has
 * been dropped the body is *replayable*: a re-run forwards it again from the first byte (and then continues with
 * whatever the client is still sending). Once the body outgrows the limit, chunks already forwarded are dropped
 * and the body can no longer be replayed; it keeps streaming through with constant memory.
 *
 * A new attempt takes over the body: the previous attempt's stream ends at its next chunk.
 *
 * With a process-wide `ReplayBudget` (`--replay-buffer-budget-bytes`), each chunk kept for a replay is taken from
 * it; a chunk that does not fit ends the retention as outgrowing the limit does (the body streams on without
 * replay, counted), and every retained byte goes back to the budget as the body drops it: when forwarded chunks are
 * dropped after the body stopped being replayable, when `stopRetaining()` says no attempt will follow (the response
 * head was relayed), and at the latest at `release()` (the request finished).
 */
import type { ReplayBudget } from './replay-budget.js';
import type { BodyFlight } from './body-budget.js';

export class RequestBody {
  readonly #source: AsyncIterable<Buffer>;
  readonly #limit: number;
  /** Retained chunks, `#chunks[0]` is chunk number `#base` of the body. */
  #chunks: Buffer[] = [];
  #base = 0;
  #retainedBytes = 0;
  #receivedBytes = 0;
  #overLimit = false;
  #ended = false;
  #error: Error | undefined;
  #iterator: AsyncIterator<Buffer> | undefined;
  #pulling: Promise<void> | undefined;
  #attempt = 0;
  readonly #budget: ReplayBudget | undefined;
  /** Bytes of the retained chunks taken from the budget: those with an absolute number below `#chargedEnd`. */
  #charged = 0;
  #chargedEnd = 0;
  /** The budget had no room for a chunk: the body stopped being retained for that reason. */
  #overBudget = false;
  /** The absolute chunk number the current attempt takes next (what it took before is forwarded). */
  #taken = 0;
  #released = false;
  #bufferedRefused = false;
  /** The body's share of the budget of bodies in flight (`body-budget.ts`) until it is received whole. */
  readonly #flight: BodyFlight | undefined;

  /**
   * `flight`: told of every chunk received, and settled once: when the whole body has been received, the client's
   * body failed, or at `release()`.
   */
  constructor(source: AsyncIterable<Buffer>, limit: number, budget?: ReplayBudget, flight?: BodyFlight) {
    this.#source = source;
    this.#limit = limit;
    this.#budget = budget;
    this.#flight = flight;
  }

  #settle(): void {
    this.#flight?.settled();
  }

  /** `--max-replay-body-bytes`: the most bytes retained for a replay (and for `buffered()`). */
  get limit(): number {
    return this.#limit;
  }

  /** The body stopped being retained because the process-wide replay budget was spent (not because of its size). */
  get overBudget(): boolean {
    return this.#overBudget;
  }

  /** Nothing has been dropped: a new attempt can send the body from its first byte. */
  get replayable(): boolean {
    return !this.#overLimit && this.#error === undefined;
  }

  /** Bytes of the body received from the client so far. */
  get receivedBytes(): number {
    return this.#receivedBytes;
  }

  /** The whole body has been received from the client. */
  get complete(): boolean {
    return this.#ended;
  }

  /**
   * The body for a new attempt: a Buffer when the whole body is already here and retained, otherwise a stream
   * (an async iterable) that replays what is retained and continues with what the client still sends.
   * Throws when the body is not replayable and an earlier attempt already took it.
   */
  forAttempt(): Buffer | AsyncIterable<Buffer> {
    const attempt = ++this.#attempt;
    if (attempt > 1 && !this.replayable) throw new Error('request body is not replayable');
    if (this.#ended && !this.#overLimit) {
      this.#taken = this.#base + this.#chunks.length;
      return this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#retainedBytes);
    }
    return this.#stream(attempt);
  }

  async *#stream(attempt: number): AsyncGenerator<Buffer> {
    let next = this.#base; // absolute chunk number to send next
    for (;;) {
      if (attempt !== this.#attempt || this.#released) return; // a newer attempt took over, or the request is over
      const at = next - this.#base;
      if (at < this.#chunks.length) {
        const chunk = this.#chunks[at] as Buffer;
        next++;
        this.#taken = next;
        if (this.#overLimit) this.#dropBefore(next);
        yield chunk;
        continue;
      }
      if (this.#error !== undefined) throw this.#error;
      if (this.#ended) return;
      await this.#pull();
    }
  }

  /** Reads one more chunk from the client into the retained list (one read at a time, shared by attempts). */
  #pull(): Promise<void> {
    this.#pulling ??= this.#readOne().finally(() => {
      this.#pulling = undefined;
    });
    return this.#pulling;
  }

  async #readOne(): Promise<void> {
    this.#iterator ??= this.#source[Symbol.asyncIterator]();
    try {
      const r = await this.#iterator.next();
      if (r.done) {
        this.#ended = true;
        this.#settle();
        return;
      }
      const chunk = r.value;
      const index = this.#base + this.#chunks.length;
      this.#receivedBytes += chunk.length;
      this.#flight?.received(chunk.length);
      this.#chunks.push(chunk);
      this.#retainedBytes += chunk.length;
      if (this.#overLimit) return; // streaming through: this chunk is dropped once forwarded
      if (this.#receivedBytes > this.#limit) return this.stopRetaining();
      const budget = this.#budget;
      if (budget === undefined) return;
      if (budget.tryAcquire(chunk.length)) {
        if (this.#charged === 0) budget.holding(true);
        this.#charged += chunk.length;
        this.#chargedEnd = index + 1;
        return;
      }
      this.#overBudget = true;
      budget.countStreamed();
      this.stopRetaining();
    } catch (err) {
      this.#error = err instanceof Error ? err : new Error(String(err));
      this.#settle();
    }
  }

  /** Over the limit: forget every chunk before `absolute` (they were forwarded and will never be replayed). */
  #dropBefore(absolute: number): void {
    const n = Math.min(absolute - this.#base, this.#chunks.length);
    if (n <= 0) return;
    let freed = 0;
    for (let i = 0; i < n; i++) {
      const length = (this.#chunks[i] as Buffer).length;
      this.#retainedBytes -= length;
      if (this.#base + i < this.#chargedEnd) freed += length;
    }
    this.#chunks.splice(0, n);
    this.#base += n;
    if (freed > 0) this.#uncharge(freed);
  }

  #uncharge(bytes: number): void {
    const budget = this.#budget;
    if (budget === undefined || this.#charged === 0) return;
    const n = Math.min(bytes, this.#charged);
    budget.release(n);
    this.#charged -= n;
    if (this.#charged === 0) budget.holding(false);
  }

  /**
   * No attempt will need the body from its first byte again (its response head was relayed, or it outgrew a
   * limit): what was forwarded is dropped now, the rest as it is forwarded, and the body is no longer replayable.
   */
  stopRetaining(): void {
    this.#overLimit = true;
    this.#dropBefore(this.#taken);
  }

  /** The request is finished: every chunk is dropped and its bytes go back to the budget. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#settle();
    this.#overLimit = true;
    this.#dropBefore(this.#base + this.#chunks.length);
  }

  /** Bytes of this body held in the replay budget now. */
  get chargedBytes(): number {
    return this.#charged;
  }

  /**
   * Reads the whole body into the replay buffer before any attempt takes it (for a processor or a filter that must
   * see the body first): the body, or undefined when it outgrows the replay limit or `limit`, or the replay budget
   * had no room for it (`overBudget`). Throws when the client's body failed.
   */
  async buffered(limit = this.#limit): Promise<Buffer | undefined> {
    while (!this.#ended && !this.#overLimit && this.#receivedBytes <= limit && this.#error === undefined) await this.#pull();
    if (this.#error !== undefined) throw this.#error;
    if (this.#overBudget && !this.#bufferedRefused) {
      this.#bufferedRefused = true;
      if (this.#budget !== undefined) this.#budget.bufferedRefused++;
    }
    if (this.#overLimit || this.#receivedBytes > limit) return undefined;
    return Buffer.concat(this.#chunks, this.#retainedBytes);
  }

  /** Replaces a fully `buffered()` body (a processor's body mutation); every attempt sends the new one. */
  replace(body: Buffer): void {
    if (!this.#ended || this.#overLimit || this.#base !== 0) throw new Error('only a fully buffered body can be replaced');
    this.#uncharge(this.#charged);
    this.#chunks = body.length > 0 ? [body] : [];
    this.#retainedBytes = body.length;
    // The replacement must be kept whatever the budget says: the client's body it replaces is gone.
    const budget = this.#budget;
    if (budget !== undefined && body.length > 0) {
      budget.force(body.length);
      budget.holding(true);
      this.#charged = body.length;
      this.#chargedEnd = 1;
    }
  }

  /** Reading from the client has begun (so node will not discard an unread rest of the body by itself). */
  get started(): boolean {
    return this.#iterator !== undefined;
  }
}
