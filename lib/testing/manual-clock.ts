/**
 * A `Clock` that only moves when a test moves it: `advance(ms)` fires every timer due on the way, each at its own
 * time and in order, and lets the promise callbacks it starts run before the next one fires.
 */
import type { Clock } from '../clock.js';

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** One turn of the event loop: every promise callback queued so far has run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #pending = new Set<Pending>();

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const p = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#pending.add(p);
    return () => void this.#pending.delete(p);
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Moves time `ms` forward, firing the timers due on the way (a timer set meanwhile fires too, if due). */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      let next: Pending | undefined;
      for (const p of this.#pending) if (p.at <= end && (next === undefined || p.at < next.at || (p.at === next.at && p.seq < next.seq))) next = p;
      if (next === undefined) break;
      this.#pending.delete(next);
      this.#now = next.at;
      next.fn();
      await settle();
    }
    this.#now = end;
  }

  /**
   * Moves time forward, from one timer to the next, until `check()` holds (only a timer, or a promise callback,
   * can change what it looks at); returns how far it moved. Throws when no timer is left or `limitMs` has passed.
   */
  async advanceUntil(check: () => boolean, limitMs: number, what = 'condition'): Promise<number> {
    const start = this.#now;
    await settle();
    while (!check()) {
      let next = Infinity;
      for (const p of this.#pending) next = Math.min(next, p.at);
      if (next === Infinity || next - start > limitMs) throw new Error(`${what}: not within ${limitMs} ms of clock time`);
      await this.advance(next - this.#now);
    }
    return this.#now - start;
  }
}
