/**
 * A fixed set of named counters with the two views every proxy counter has: since the last `POST /stats/reset`
 * (`/stats`, through lib/since-reset.ts) and since the process started (Prometheus, which must never see a counter
 * go down).
 */
import { SinceReset } from '../../../lib/since-reset.js';

/** Each name with a count of 0. */
export function zeroCounts<N extends string>(names: readonly N[]): Record<N, number> {
  const out = {} as Record<N, number>;
  for (const n of names) out[n] = 0;
  return out;
}

export class CounterSet<Name extends string> {
  readonly #live: Record<Name, number>;
  readonly #sinceReset: SinceReset<Record<Name, number>>;

  constructor(readonly names: readonly Name[]) {
    this.#live = zeroCounts(names);
    this.#sinceReset = new SinceReset(() => this.#live);
  }

  inc(name: Name): void {
    this.#live[name] += 1;
  }

  /** Counts `n` (≥ 0) at once. */
  add(name: Name, n: number): void {
    this.#live[name] += n;
  }

  /** Counts since the last `reset()`. */
  view(): Record<Name, number> {
    return this.#sinceReset.current() as Record<Name, number>;
  }

  /** Counts since the set was made. */
  lifetime(): Record<Name, number> {
    return { ...this.#live };
  }

  reset(): void {
    this.#sinceReset.reset();
  }
}
