/** A Set that keeps at most `limit` values, forgetting the oldest (first added) when a new one would exceed it. */
export class CappedSet<T> implements Iterable<T> {
  private readonly values = new Set<T>();
  /** Values forgotten to stay within the limit (since construction or the last clear). */
  evicted = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`CappedSet limit must be a positive integer, got ${limit}`);
  }

  get size(): number {
    return this.values.size;
  }

  has(value: T): boolean {
    return this.values.has(value);
  }

  /** Adds `value` (a no-op when present); forgets the oldest value when full. */
  add(value: T): this {
    if (this.values.has(value)) return this;
    if (this.values.size >= this.limit) {
      const oldest = this.values.values().next().value as T;
      this.values.delete(oldest);
      this.evicted++;
    }
    this.values.add(value);
    return this;
  }

  clear(): void {
    this.values.clear();
    this.evicted = 0;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.values.values();
  }
}
