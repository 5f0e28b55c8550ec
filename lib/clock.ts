/**
 * Time as a module that decides by it reads it: the current time and one-shot timers. Such a module takes a
 * `Clock` (the real one by default), so its tests drive time by hand (`lib/testing/manual-clock.ts`) instead of
 * waiting it out.
 */

export interface Clock {
  /** Milliseconds since the epoch (`Date.now()`). */
  now(): number;
  /** Calls `fn` once, `ms` from now; the timer does not keep the process alive. Returns what cancels it. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const REAL_CLOCK: Clock = Object.freeze({
  now: (): number => Date.now(),
  setTimeout: (fn: () => void, ms: number): (() => void) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
});
