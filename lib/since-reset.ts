/**
 * Counters with a resettable baseline, the one way every component keeps them: the tallies themselves only go up
 * (Prometheus reads them as they are, so its counters never go backwards), and `/stats` reports them minus a copy
 * taken at the last `POST /stats/reset`. The tallies stay plain numbers (and Float64Arrays, and records of them)
 * bumped on the request path; the baseline costs nothing until `/stats` or a reset asks for it.
 */

/** What can be counted: numbers, Float64Arrays of numbers, and records of those. */
export type Tally = number | Float64Array | { readonly [key: string]: Tally };

/**
 * The data fields of `T` (methods dropped) as `SinceReset` returns them: numbers stay numbers, arrays stay arrays,
 * records are recursed into.
 */
export type Tallies<T> = T extends number
  ? number
  : T extends Float64Array
    ? Float64Array
    : { readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Tallies<T[K]> };

function copy(value: unknown): unknown {
  if (typeof value === 'number') return value;
  if (value instanceof Float64Array) return value.slice();
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as object)) {
    if (typeof v === 'number' || v instanceof Float64Array || (typeof v === 'object' && v !== null)) out[k] = copy(v);
  }
  return out;
}

function subtract(now: unknown, then: unknown): unknown {
  if (typeof now === 'number') return now - (typeof then === 'number' ? then : 0);
  if (now instanceof Float64Array) {
    const out = now.slice();
    if (then instanceof Float64Array) for (let i = 0; i < out.length; i++) out[i]! -= then[i] ?? 0;
    return out;
  }
  const base = (then ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(now as object)) {
    if (typeof v === 'number' || v instanceof Float64Array || (typeof v === 'object' && v !== null)) out[k] = subtract(v, base[k]);
  }
  return out;
}

/** `read` returns the live tallies (the same object each time, or a fresh view of them). */
export class SinceReset<T extends object | number> {
  #baseline: unknown;

  constructor(private readonly read: () => T) {
    this.#baseline = copy(read());
  }

  /** Starts the `/stats` view from zero again; the tallies themselves are untouched. */
  reset(): void {
    this.#baseline = copy(this.read());
  }

  /** The tallies minus the baseline (a key the baseline lacks counts from zero). */
  current(): Tallies<T> {
    return subtract(this.read(), this.#baseline) as Tallies<T>;
  }
}
