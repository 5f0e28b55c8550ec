/**
 * The load generator: autocannon's programmatic API in this process. Each connection gets its own request list
 * (pre-built, so autocannon encodes each request once and the generator spends its CPU on sending, not on
 * building), and every response time is recorded at microsecond resolution by the benchmark itself.
 */
import autocannon from 'autocannon';
import { LatencyRecorder, type LatencySummary } from './latency.js';

export type LoadRequest = autocannon.Request;

export interface LoadPlan {
  /** Client i connects to urls[i % urls.length]. */
  readonly urls: readonly string[];
  readonly connections: number;
  /** The requests client `index` loops over; `url` is the one it connects to. */
  requestsFor(index: number, url: string): LoadRequest[];
  /** Requests per second over all connections (autocannon's overallRate); absent: each connection as fast as it is answered. */
  readonly overallRate?: number;
}

export interface LoadResult {
  /** Responses of any status. */
  readonly requests: number;
  readonly durationS: number;
  readonly rps: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly latency: LatencySummary;
  /** CPU this process spent while the load ran (the load generator's own cost). */
  readonly loadgenCpuMs: number;
  readonly loadgenPeakRssBytes: number;
}

export interface LoadHooks {
  /** Called once the load is running (churn starts here). */
  readonly onStart?: () => void | Promise<void>;
  /** Called for every answer (its status) and every failed request (connection error or timeout). */
  readonly onResponse?: (status: number) => void;
  readonly onError?: () => void;
  /** Ends the load early when it resolves (the duration is then an upper bound). */
  readonly until?: Promise<unknown>;
}

/** Runs one load phase for `durationS` seconds and returns what the client saw. */
export async function runLoad(plan: LoadPlan, durationS: number, hooks: LoadHooks = {}): Promise<LoadResult> {
  if (plan.urls.length === 0) throw new Error('load: no target URL');
  const recorder = new LatencyRecorder();
  const urls = [...plan.urls];
  // Every connection's list is built before the load starts, so building costs nothing in the measured CPU.
  const lists = Array.from({ length: plan.connections }, (_, i) => plan.requestsFor(i, urls[i % urls.length] as string));
  let clientIndex = 0;
  const opts = {
    url: urls.length === 1 ? (urls[0] as string) : (urls as unknown as string),
    connections: plan.connections,
    pipelining: 1,
    duration: durationS,
    timeout: 30,
    requests: (lists[0] ?? []).slice(0, 1),
    ...(plan.overallRate === undefined ? {} : { overallRate: plan.overallRate }),
    setupClient: (client: autocannon.Client) => {
      client.setRequests(lists[clientIndex++ % lists.length] as LoadRequest[]);
    },
  } satisfies autocannon.Options;
  let started: Promise<void> = Promise.resolve();
  // autocannon builds (and encodes) every client synchronously inside the call; the CPU count starts after it.
  let cpu0 = process.cpuUsage();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(opts, (err, res) => (err ? reject(err as Error) : resolve(res)));
    cpu0 = process.cpuUsage();
    const onResponse = hooks.onResponse;
    instance.on('response', (_client: autocannon.Client, status: number, _bytes: number, responseTime: number) => {
      recorder.record(responseTime);
      onResponse?.(status);
    });
    if (hooks.onError) instance.on('reqError', hooks.onError);
    if (hooks.onStart) started = Promise.resolve().then(hooks.onStart);
    void hooks.until?.then(
      () => instance.stop(),
      () => instance.stop(),
    );
  });
  await started;
  const cpu = process.cpuUsage(cpu0);
  const statusCounts: Record<string, number> = {};
  let total = 0;
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) {
    const n = (v as { count?: number }).count ?? 0;
    statusCounts[code] = n;
    total += n;
  }
  const duration = result.duration > 0 ? result.duration : durationS;
  return {
    requests: total,
    durationS: duration,
    rps: total / duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCounts,
    latency: recorder.summary(),
    loadgenCpuMs: (cpu.user + cpu.system) / 1000,
    loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

/** The Host header of an actor. */
export function actorHost(name: string, atespace: string, suffix: string): string {
  return `${name}.${atespace}.${suffix}`;
}

/**
 * Pre-built GETs, one per sampled index. Each carries an `x-request-id` (`<idPrefix><k>`, repeating when the
 * connection loops over its list), so the workers do the same per-request bookkeeping in every arm: without it
 * only the proxy arms would carry ids (the proxy adds one when a request has none) and the workers would record
 * deliveries for them alone.
 */
export function getRequests(hosts: readonly string[], count: number, sample: () => number, idPrefix: string, path = '/'): LoadRequest[] {
  const out: LoadRequest[] = [];
  for (let i = 0; i < count; i++) out.push({ method: 'GET', path, headers: { host: hosts[sample()] as string, 'x-request-id': `${idPrefix}${i}` } });
  return out;
}
