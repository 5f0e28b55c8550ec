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
 */
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

  constructor(source: AsyncIterable<Buffer>, limit: number) {
    this.#source = source;
    this.#limit = limit;
  }

  /** `--max-replay-body-bytes`: the most bytes retained for a replay (and for `buffered()`). */
  get limit(): number {
    return this.#limit;
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
      return this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#retainedBytes);
    }
    return this.#stream(attempt);
  }

  async *#stream(attempt: number): AsyncGenerator<Buffer> {
    let next = this.#base; // absolute chunk number to send next
    for (;;) {
      if (attempt !== this.#attempt) return; // a newer attempt took over
      const at = next - this.#base;
      if (at < this.#chunks.length) {
        const chunk = this.#chunks[at] as Buffer;
        next++;
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
        return;
      }
      const chunk = r.value;
      this.#receivedBytes += chunk.length;
      this.#chunks.push(chunk);
      this.#retainedBytes += chunk.length;
      if (this.#receivedBytes > this.#limit) this.#overLimit = true;
    } catch (err) {
      this.#error = err instanceof Error ? err : new Error(String(err));
    }
  }

  /** Over the limit: forget every chunk before `absolute` (they were forwarded and will never be replayed). */
  #dropBefore(absolute: number): void {
    const n = Math.min(absolute - this.#base, this.#chunks.length);
    if (n <= 0) return;
    for (let i = 0; i < n; i++) this.#retainedBytes -= (this.#chunks[i] as Buffer).length;
    this.#chunks.splice(0, n);
    this.#base += n;
  }

  /**
   * Reads the whole body into the replay buffer before any attempt takes it (for a processor or a filter that must
   * see the body first): the body, or undefined when it outgrows the replay limit or `limit`. Throws when the
   * client's body failed.
   */
  async buffered(limit = this.#limit): Promise<Buffer | undefined> {
    while (!this.#ended && !this.#overLimit && this.#receivedBytes <= limit && this.#error === undefined) await this.#pull();
    if (this.#error !== undefined) throw this.#error;
    if (this.#overLimit || this.#receivedBytes > limit) return undefined;
    return Buffer.concat(this.#chunks, this.#retainedBytes);
  }

  /** Replaces a fully `buffered()` body (a processor's body mutation); every attempt sends the new one. */
  replace(body: Buffer): void {
    if (!this.#ended || this.#overLimit || this.#base !== 0) throw new Error('only a fully buffered body can be replaced');
    this.#chunks = body.length > 0 ? [body] : [];
    this.#retainedBytes = body.length;
  }

  /** Reading from the client has begun (so node will not discard an unread rest of the body by itself). */
  get started(): boolean {
    return this.#iterator !== undefined;
  }
}
