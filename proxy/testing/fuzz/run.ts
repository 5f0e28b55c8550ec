/**
 * How a fuzz property runs: seeded and replayable. The seed is `FUZZ_SEED` (or a fixed default, so `npm test`
 * generates the same cases every time), the number of cases `FUZZ_RUNS` (or the property's own short default), and
 * `FUZZ_PATH` replays one counterexample (with its seed). On a failure the report names the seed, the path and
 * the shrunk case, and the command that replays it.
 */
import fc from 'fast-check';

/** The seed `npm test` uses when `FUZZ_SEED` is not set. */
export const DEFAULT_SEED = 4141;

export interface FuzzSettings {
  readonly seed: number;
  readonly numRuns: number;
  readonly path: string | undefined;
}

function integerFrom(env: string | undefined, what: string): number | undefined {
  if (env === undefined || env === '') return undefined;
  const n = Number(env);
  if (!Number.isSafeInteger(n)) throw new Error(`${what}=${env}: not an integer`);
  return n;
}

/** The run's settings: the environment's, else the defaults. */
export function fuzzSettings(defaultRuns: number, env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const runs = integerFrom(env.FUZZ_RUNS, 'FUZZ_RUNS') ?? defaultRuns;
  if (runs < 1) throw new Error(`FUZZ_RUNS=${runs}: at least 1`);
  const path = env.FUZZ_PATH === undefined || env.FUZZ_PATH === '' ? undefined : env.FUZZ_PATH;
  return { seed: integerFrom(env.FUZZ_SEED, 'FUZZ_SEED') ?? DEFAULT_SEED, numRuns: runs, path };
}

/** The lines a failure report starts with: what replays it, and the shrunk case. */
export function replayLines(file: string, details: fc.RunDetails<unknown>): string[] {
  const path = details.counterexamplePath ?? '';
  return [
    `fuzz property failed: ${file}`,
    `  seed ${details.seed}, path ${path}, after ${details.numRuns} run(s) and ${details.numShrinks} shrink(s)`,
    `  shrunk case: ${fc.stringify(details.counterexample)}`,
    `  replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${path} node --test ${file}`,
  ];
}

/** How long shrinking may go on after the first failure (each shrink step runs a real case): `FUZZ_SHRINK_MS`. */
const SHRINK_MS = 30_000;

/**
 * Checks `predicate` on cases from `arb` with the run's settings; on a failure prints the replay lines and throws
 * fast-check's own report (the error of the shrunk case included). `file` is the compiled test file (for the replay
 * command). Shrinking stops after `FUZZ_SHRINK_MS`: later candidates count as passing, so the case reported is the
 * smallest one that failed by then (itself a real failure, replayable by its path).
 */
export async function checkProperty<T>(file: string, arb: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, defaultRuns: number): Promise<FuzzSettings> {
  const settings = fuzzSettings(defaultRuns);
  const shrinkMs = integerFrom(process.env.FUZZ_SHRINK_MS, 'FUZZ_SHRINK_MS') ?? SHRINK_MS;
  let firstFailureAt: number | undefined;
  const property = fc.asyncProperty(arb, async (value) => {
    if (firstFailureAt !== undefined && Date.now() - firstFailureAt > shrinkMs) return;
    try {
      await predicate(value);
    } catch (err) {
      firstFailureAt ??= Date.now();
      throw err;
    }
  });
  await fc.assert(property, {
    seed: settings.seed,
    numRuns: settings.numRuns,
    ...(settings.path === undefined ? {} : { path: settings.path }),
    verbose: fc.VerbosityLevel.Verbose,
    includeErrorInReport: true,
    asyncReporter: async (details) => {
      if (!details.failed) return;
      const lines = replayLines(file, details as fc.RunDetails<unknown>);
      console.error(lines.join('\n'));
      throw new Error(`${lines.join('\n')}\n${await fc.asyncDefaultReportMessage(details)}`);
    },
  });
  return settings;
}

/** Resolves or rejects as `work` does, or rejects naming `what` once `ms` passed. */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
