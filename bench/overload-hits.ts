/**
 * The overload scenario's steady hit load, in a worker thread: GETs spread uniformly over a few warm actors, every
 * answer counted in 50 ms buckets by the time it arrived. At a fixed rate (`pacedLoad`: one request every 1/rate s,
 * evenly spaced, over a pool of --connections keep-alive connections; autocannon's own rate limit sends each
 * second's share in a burst at the second's start, which makes a few seconds' rate jump by a third), or, with rate
 * 0, autocannon's closed loop (`load.ts`). In a thread of its own, the load's event loop does not wait behind the floods' (10,000 sockets opened, a byte written to 2,000
 * others every few milliseconds), so a drop in hits is the proxy's, not the load generator's; the two still share
 * the machine's CPUs with every other process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { LatencyRecorder } from './latency.js';
import { getRequests, runLoad, type LoadHooks, type LoadPlan, type LoadResult } from './load.js';
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
  /** Requests per second over all connections; 0: a closed loop. */
  readonly rate: number;
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

/** The most paced requests waiting for an answer at once; past it a request due is not sent (`notSent`). */
export const PACED_MAX_IN_FLIGHT = 1024;

/**
 * `rate` GETs a second, evenly spaced whatever the answers do (an open loop up to PACED_MAX_IN_FLIGHT waiting),
 * over a pool of `connections` keep-alive connections (requests beyond them wait in the pool), until `until`
 * resolves or `maxS` passes. A request due while PACED_MAX_IN_FLIGHT wait is not sent and counts as an error.
 */
export async function pacedLoad(params: HitLoadParams, hooks: LoadHooks & { until: Promise<unknown> }): Promise<LoadResult> {
  const pool = new Pool(params.url, { connections: params.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const pick = uniformSampler(params.hosts.length, createRng(params.seed >>> 0));
  const recorder = new LatencyRecorder();
  const statusCounts: Record<string, number> = {};
  let stopped = false;
  void hooks.until.then(() => (stopped = true));
  let inFlight = 0;
  let answered = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + params.maxS * 1000;
  const interval = 1000 / params.rate;
  const send = (): void => {
    const k = sent++;
    inFlight++;
    const start = performance.now();
    pool
      .request({ path: '/', method: 'GET', headers: { host: params.hosts[pick()] as string, 'x-request-id': `h-${k}` } })
      .then(async (res) => {
        await res.body.dump();
        recorder.record(performance.now() - start);
        answered++;
        statusCounts[String(res.statusCode)] = (statusCounts[String(res.statusCode)] ?? 0) + 1;
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        hooks.onResponse?.(res.statusCode);
      })
      .catch(() => {
        if (stopped) return; // cut short by the stop: neither an answer nor an error
        errors++;
        hooks.onError?.();
      })
      .finally(() => inFlight--);
  };
  let next = t0;
  while (!stopped && performance.now() < end) {
    const now = performance.now();
    for (; next <= now && !stopped; next += interval) {
      if (inFlight < PACED_MAX_IN_FLIGHT) send();
      else {
        errors++;
        hooks.onError?.();
      }
    }
    await sleep(Math.max(1, next - performance.now()));
  }
  const durationS = (performance.now() - t0) / 1000;
  await pool.destroy().catch(() => undefined);
  const cpu = process.cpuUsage(cpu0);
  return {
    requests: answered,
    durationS,
    rps: durationS > 0 ? answered / durationS : 0,
    non2xx,
    errors,
    timeouts: 0,
    statusCounts,
    latency: recorder.summary(),
    loadgenCpuMs: (cpu.user + cpu.system) / 1000,
    loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
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
    const hooks = {
      onResponse: (status: number) => {
        bump(status >= 200 && status < 300 ? ok : non2xx, bucket());
        if (first) {
          first = false;
          port.postMessage({ type: 'started' } satisfies FromWorker);
        }
      },
      onError: () => bump(errors, bucket()),
      until,
    };
    const result =
      params.rate > 0 ? await pacedLoad(params, hooks) : await runLoad(hitPlan(params.url, params.hosts, params.connections, params.seed), params.maxS, hooks);
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
