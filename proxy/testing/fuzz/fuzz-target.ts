/**
 * One fuzz file's frame, the same for every target: its stack started before the property and stopped after it
 * (bounded: a proxy that cannot stop must not hang the file), a seeded property over generated cases, the checks
 * every case ends with (`afterCase`: the process lived, nothing leaked in flight, no internal error, nothing reached
 * the decoy) and the run ends with (`afterRun`), and a summary of what the run covered. A target says only how to
 * start its stack, what to generate, and how to send one case and judge its answer.
 */
import { after, before, type TestContext } from 'node:test';
import type fc from 'fast-check';
import type { ProxyHandle } from '../proxy.js';
import { afterCase, afterRun, caseStats } from './case-checks.js';
import { compiledPath } from './compiled-path.js';
import type { Decoy } from './decoy.js';
import { FaultRecorder } from './faults.js';
import { checkProperty, withDeadline } from './run.js';

/** What the common checks need of a target's stack. */
export interface FuzzStack {
  readonly proxy: ProxyHandle;
  readonly decoy: Decoy;
  close(): Promise<void>;
}

export interface CaseContext<S extends FuzzStack> {
  readonly stack: S;
  /** The case's number in this run (request ids carry it). */
  readonly n: number;
  /** Counts something the run covered (an answer's status, a request that reached a worker), for the summary. */
  count(key: string): void;
  /**
   * Once the case's traffic is over: waits for the proxy to settle and returns what the common checks found. A case
   * that reads what its workers received calls it first (they have it all by then); otherwise it runs after `send`.
   */
  settle(): Promise<string[]>;
}

export interface FuzzTarget<S extends FuzzStack, T> {
  /** The test file's `import.meta.url` (a failure's replay command names the file). */
  readonly file: string;
  /** Cases per run in `npm test` (`npm run fuzz -- --runs N` sets more). */
  readonly runs: number;
  start(): Promise<S>;
  cases(stack: S): fc.Arbitrary<T>;
  /** Sends one case; returns its problems (empty: it passed), the common checks' (`settle`) among them. */
  send(value: T, ctx: CaseContext<S>): Promise<string[]>;
}

const STOP_DEADLINE_MS = 40_000;

/**
 * Registers the target's before and after hooks in the calling test file and returns its property, for the file's
 * own `test(title, ...)` (so the test is the file's: node's reporters name the file that called `test`).
 */
export function fuzzTarget<S extends FuzzStack, T>(target: FuzzTarget<S, T>): (t: TestContext) => Promise<void> {
  let stack: S | undefined;
  let faults: FaultRecorder | undefined;
  const errors = new Map<string, number>();
  const seen = new Map<string, number>();
  const count = (key: string): void => void seen.set(key, (seen.get(key) ?? 0) + 1);

  before(async () => {
    faults = new FaultRecorder();
    stack = await target.start();
  });

  after(async () => {
    await withDeadline(stack?.close() ?? Promise.resolve(), STOP_DEADLINE_MS, 'closing the stack').catch((err: unknown) => console.error(String(err)));
    faults?.stop();
  });

  return async (t) => {
    const s = stack as S;
    const watch = { proxy: s.proxy, faults: faults as FaultRecorder, decoy: s.decoy };
    let n = 0;
    const settings = await checkProperty(compiledPath(target.file), target.cases(s), async (value) => {
      const before = await caseStats(s.proxy);
      let settled = false;
      const ctx: CaseContext<S> = {
        stack: s,
        n: n++,
        count,
        settle: () => {
          if (settled) throw new Error('fuzzTarget: settle() called twice in one case');
          settled = true;
          return afterCase(watch, before, errors);
        },
      };
      const problems = await target.send(value, ctx);
      if (!settled) problems.push(...(await ctx.settle()));
      if (problems.length > 0) throw new Error(problems.join('\n'));
    }, target.runs);
    const end = await afterRun(watch);
    if (end.length > 0) throw new Error(`at the end of the run (seed ${settings.seed}):\n${end.join('\n')}`);
    t.diagnostic(`seed ${settings.seed}, ${settings.numRuns} case(s); seen ${JSON.stringify(Object.fromEntries(seen))}; proxy error-level log lines ${JSON.stringify(Object.fromEntries(errors))}`);
  };
}
