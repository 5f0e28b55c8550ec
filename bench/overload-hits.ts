/**
 * The overload scenario's steady hit load: autocannon (`load.ts`) in a worker thread, closed loop, GETs spread
 * uniformly over a few warm actors, every answer counted in 50 ms buckets by the time it arrived. In a thread of its
 * own, the load's event loop does not wait behind the floods' (10,000 sockets opened, a byte written to 2,000
 * others every few milliseconds), so a drop in hits is the proxy's, not the load generator's; the two still share
 * the machine's CPUs with every other process.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { getRequests, runLoad, type LoadPlan, type LoadResult } from './load.js';
import type { HitBuckets } from './overload-report.js';
import { createRng, uniformSampler } from './sampling.js';

export const HIT_BUCKET_MS = 50;
/** Requests in each connection's pre-built list (as the other scenarios' `plans.ts`). */
const LIST_LENGTH = 4096;

export interface HitLoadParams {
  readonly url: string;
  readonly hosts: readonly string[];
  readonly connections: number;
  readonly seed: number;
  /** Upper bound of the load's length; `stop()` ends it. */
  readonly maxS: number;
}

export interface HitLoadRun {
  readonly result: LoadResult;
  readonly buckets: HitBuckets;
}

type FromWorker = { readonly type: 'started' } | ({ readonly type: 'done' } & HitLoadRun) | { readonly type: 'failed'; readonly message: string };

const WORKER_KIND = 'overload-hits';

/** A hit load running in its own thread. */
export class HitLoad {
  readonly #worker: Worker;
  readonly #done: Promise<HitLoadRun>;
  /** Resolves once the first answer arrived (the load is running); rejects if the thread fails first. */
  readonly started: Promise<void>;

  private constructor(params: HitLoadParams) {
    this.#worker = new Worker(new URL(import.meta.url), { workerData: { kind: WORKER_KIND, params } });
    let started!: () => void;
    let notStarted!: (err: Error) => void;
    this.started = new Promise<void>((resolve, reject) => {
      started = resolve;
      notStarted = reject;
    });
    this.started.catch(() => undefined);
    this.#done = new Promise<HitLoadRun>((resolve, reject) => {
      const fail = (err: Error): void => {
        notStarted(err);
        reject(err);
      };
      this.#worker.on('message', (m: FromWorker) => {
        if (m.type === 'started') started();
        else if (m.type === 'done') resolve({ result: m.result, buckets: m.buckets });
        else fail(new Error(`hit load: ${m.message}`));
      });
      this.#worker.on('error', fail);
      this.#worker.on('exit', (code) => fail(new Error(`hit load thread exited (code ${code})`)));
    });
    this.#done.catch(() => undefined);
  }

  static start(params: HitLoadParams): HitLoad {
    return new HitLoad(params);
  }

  /** Ends the load and answers what it saw (or fails after `timeoutMs`); the thread exits either way. */
  async stop(timeoutMs = 60_000): Promise<HitLoadRun> {
    this.#worker.postMessage('stop');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`hit load: no result ${timeoutMs / 1000} s after it was stopped`)), timeoutMs);
    });
    try {
      return await Promise.race([this.#done, late]);
    } finally {
      clearTimeout(timer);
      await this.#worker.terminate();
    }
  }

  /** Ends the thread at once (cleanup after a failure). */
  async kill(): Promise<void> {
    await this.#worker.terminate();
  }
}

/** Closed-loop GETs, a uniformly random one of `hosts` each, seeded per connection (as `plans.ts` `clientSeed`). */
export function hitPlan(url: string, hosts: readonly string[], connections: number, seed: number): LoadPlan {
  return {
    urls: [url],
    connections,
    requestsFor: (i) => getRequests(hosts, LIST_LENGTH, uniformSampler(hosts.length, createRng((seed * 7919 + i * 104_729) >>> 0)), `h${i}-`),
  };
}

/** Adds one to bucket `i`, growing the array with zeros. */
function bump(counts: number[], i: number): void {
  while (counts.length <= i) counts.push(0);
  counts[i] = (counts[i] as number) + 1;
}

async function runInWorker(params: HitLoadParams): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  const startMs = Date.now();
  const ok: number[] = [];
  const non2xx: number[] = [];
  const errors: number[] = [];
  const bucket = (): number => Math.max(0, Math.floor((Date.now() - startMs) / HIT_BUCKET_MS));
  let stop!: () => void;
  const until = new Promise<void>((resolve) => (stop = resolve));
  port.on('message', (m) => {
    if (m === 'stop') stop();
  });
  let first = true;
  try {
    const result = await runLoad(hitPlan(params.url, params.hosts, params.connections, params.seed), params.maxS, {
      onResponse: (status) => {
        bump(status >= 200 && status < 300 ? ok : non2xx, bucket());
        if (first) {
          first = false;
          port.postMessage({ type: 'started' } satisfies FromWorker);
        }
      },
      onError: () => bump(errors, bucket()),
      until,
    });
    const n = Math.max(ok.length, non2xx.length, errors.length);
    for (const counts of [ok, non2xx, errors]) while (counts.length < n) counts.push(0);
    port.postMessage({ type: 'done', result, buckets: { startMs, bucketMs: HIT_BUCKET_MS, ok, non2xx, errors } } satisfies FromWorker);
  } catch (err) {
    port.postMessage({ type: 'failed', message: (err as Error).message } satisfies FromWorker);
  }
}

if (!isMainThread && (workerData as { kind?: unknown } | null)?.kind === WORKER_KIND) {
  void runInWorker((workerData as { params: HitLoadParams }).params);
}
