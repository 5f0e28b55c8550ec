/**
 * Retry backoff for ResumeActor: the n-th wait is `initialMs × factor^n`, plus up to `jitter` of itself at random.
 * There is deliberately no cap: the budget bounds the retries, and a cap would only make them denser.
 */
export interface BackoffOptions {
  readonly initialMs: number;
  readonly factor: number;
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({ initialMs: 100, factor: 1.1, jitter: 0.1 });

/** Returns a function giving the next wait in ms each time it is called. */
export function backoffSequence(options: BackoffOptions, random: () => number = Math.random): () => number {
  let base = options.initialMs;
  const factor = Math.max(1, options.factor);
  return () => {
    const wait = base + random() * options.jitter * base;
    base *= factor;
    return wait;
  };
}
