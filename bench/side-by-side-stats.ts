/**
 * The side-by-side scenario's arithmetic, apart from any process: rounds of CPU per request (µs) per front
 * process, measured at the same moments, summarised per arm and as per-round ratios of one arm to another. A
 * ratio is taken inside each round (both processes under the same load at the same time), so whatever slowed
 * the machine in that round slowed both; the spread of the ratios over rounds gives its standard error.
 */

/** One round: each arm's CPU per request over that round's window (µs). */
export type Round = Readonly<Record<string, number>>;

export interface Spread {
  readonly median: number;
  readonly mean: number;
  /** Sample standard deviation (0 for fewer than two values). */
  readonly sd: number;
  /** Standard error of the mean: sd / √n. */
  readonly se: number;
  readonly n: number;
}

export interface RatioSummary extends Spread {
  /** The arm divided… */
  readonly arm: string;
  /** …by this one, round by round. */
  readonly base: string;
}

export function spread(values: readonly number[]): Spread {
  const n = values.length;
  if (n === 0) return { median: NaN, mean: NaN, sd: NaN, se: NaN, n: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const median = n % 2 === 1 ? (sorted[(n - 1) / 2] as number) : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = n < 2 ? 0 : Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
  return { median, mean, sd, se: sd / Math.sqrt(n), n };
}

/** Each arm's CPU per request over the rounds it has a value in. */
export function perArm(rounds: readonly Round[], arms: readonly string[]): Readonly<Record<string, Spread>> {
  const out: Record<string, Spread> = {};
  for (const arm of arms) out[arm] = spread(valuesOf(rounds, arm));
  return out;
}

/** `arm ÷ base` in every round both have a finite, positive value. */
export function ratio(rounds: readonly Round[], arm: string, base: string): RatioSummary {
  const values: number[] = [];
  for (const r of rounds) {
    const a = r[arm];
    const b = r[base];
    if (usable(a) && usable(b)) values.push(a / b);
  }
  return { arm, base, ...spread(values) };
}

function valuesOf(rounds: readonly Round[], arm: string): number[] {
  const out: number[] = [];
  for (const r of rounds) {
    const v = r[arm];
    if (usable(v)) out.push(v);
  }
  return out;
}

function usable(v: number | undefined): v is number {
  return v !== undefined && Number.isFinite(v) && v > 0;
}

/** The order the arms' loads start in round `k`: every permutation in turn, so no arm always starts first. */
export function startOrder<T>(items: readonly T[], k: number): T[] {
  const rest = [...items];
  const out: T[] = [];
  let code = k;
  while (rest.length > 0) {
    const n = rest.length;
    out.push(rest.splice(code % n, 1)[0] as T);
    code = Math.floor(code / n);
  }
  return out;
}
