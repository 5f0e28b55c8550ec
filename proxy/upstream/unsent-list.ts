/**
 * The requests a worker's pool holds that have not started writing (queued, or waiting for a connection): the ones
 * outlier detection fails at once when the worker's address goes down (`pools.ts`, `outliers.ts`).
 *
 * An intrusive list: each attempt carries its own links, so adding and removing one — twice per request on the hit
 * path — allocates nothing. (A `Set` regrew and shrank its tables as requests came and went, and each new table,
 * held by a pool that lives for the process, was copied by every young-generation collection.)
 */

/** An attempt that can be on one unsent list at a time. */
export interface UnsentAttempt {
  /** Fails the attempt at once as a connect failure (its address went down); it is dropped unsent. */
  eject(): void;
  /** The list's links: owned by `UnsentList`, never set by the attempt itself. */
  unsentList: UnsentList | undefined;
  unsentPrev: UnsentAttempt | undefined;
  unsentNext: UnsentAttempt | undefined;
}

export class UnsentList {
  #first: UnsentAttempt | undefined = undefined;
  #last: UnsentAttempt | undefined = undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Appends `a` (already on a list: left where it is). */
  add(a: UnsentAttempt): void {
    if (a.unsentList !== undefined) return;
    a.unsentList = this;
    a.unsentPrev = this.#last;
    a.unsentNext = undefined;
    if (this.#last === undefined) this.#first = a;
    else this.#last.unsentNext = a;
    this.#last = a;
    this.#size++;
  }

  /** Removes `a` when it is on this list (a no-op otherwise). */
  delete(a: UnsentAttempt): void {
    if (a.unsentList !== this) return;
    const { unsentPrev: prev, unsentNext: next } = a;
    if (prev === undefined) this.#first = next;
    else prev.unsentNext = next;
    if (next === undefined) this.#last = prev;
    else next.unsentPrev = prev;
    a.unsentList = undefined;
    a.unsentPrev = undefined;
    a.unsentNext = undefined;
    this.#size--;
  }

  /** Empties the list and returns what it held, oldest first. */
  takeAll(): UnsentAttempt[] {
    const out: UnsentAttempt[] = [];
    while (this.#first !== undefined) {
      const a = this.#first;
      out.push(a);
      this.delete(a);
    }
    return out;
  }
}
