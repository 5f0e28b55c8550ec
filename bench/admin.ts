/**
 * The benchmark's view of the components' admin APIs: GET /stats, POST /stats/reset, and the stub's actor and
 * churn endpoints. Readers are tolerant (a missing field reads as 0 or null) so one component's extra fields
 * never break the report; the shapes follow the admin /stats contract.
 */
import type { StatsReading } from '../proxy/admin/stats-document.js';

export interface ProcessCounters {
  readonly cpuUs: number;
  readonly maxRssBytes: number;
}

export interface StubCounters {
  readonly resumeCalls: number;
  readonly resumeByCode: Readonly<Record<string, number>>;
  readonly actorsByStatus: Readonly<Record<string, number>>;
  readonly deliveriesTotal: number;
  readonly duplicates: number;
  readonly process: ProcessCounters | null;
}

export interface ExtprocCounters {
  readonly streams: number;
  readonly process: ProcessCounters | null;
}

export interface ProxyCounters {
  readonly requests: number;
  readonly extprocStreams: number;
  readonly cacheEnabled: boolean;
  readonly hits: number;
  readonly misses: number;
  /** Misses routed from the binding another request's miss of the same actor learned (no stream of their own). */
  readonly coalesced: number;
  readonly entries: number;
  readonly evictions: Readonly<Record<string, number>>;
  readonly reruns: Readonly<Record<string, number>>;
  /** Re-runs by their number within a request (`"1"`, `"2"`, ...; empty for a proxy that does not report it). */
  readonly rerunsByAttempt: Readonly<Record<string, number>>;
  readonly connectFailures: number;
  readonly resets: number;
  /**
   * Requests answered 502 because their worker reset after the whole request was written and the method may not
   * be sent twice (not GET, HEAD or OPTIONS): never re-run, the actor may have received them.
   */
  readonly resetsNotReplayable: number;
  /** Outlier detection: worker addresses marked down (all reasons), and requests failed at once because theirs was. */
  readonly outlierEjections: number;
  readonly failedFast: number;
  /** Fresh ext_proc streams opened for misses whose stream could not be opened. */
  readonly extprocRetries: number;
  readonly resolverResumeCalls: number;
  readonly process: ProcessCounters | null;
}

type Json = Record<string, unknown>;

/** `v` when it is a plain object, else `{}` (a typed `v` keeps its type: its fields are read as possibly missing). */
export function obj<T extends object>(v: T | null | undefined): Partial<T>;
export function obj(v: unknown): Json;
export function obj(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : 0;
}

/** Sums the numeric leaves one level down: {"OK": 3, "ABORTED": 1} → 4. */
export function sumValues(v: unknown): number {
  return Object.values(obj(v)).reduce<number>((acc, x) => acc + num(x), 0);
}

function numbers(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(obj(v))) out[k] = num(x);
  return out;
}

export function readProcess(stats: unknown): ProcessCounters | null {
  const p = obj(obj(stats)['process']);
  if (!('cpuUserUs' in p)) return null;
  return { cpuUs: num(p['cpuUserUs']) + num(p['cpuSystemUs']), maxRssBytes: num(p['maxRssBytes']) || num(p['rssBytes']) };
}

export function readStub(stats: unknown): StubCounters {
  const s = obj(stats);
  const resume = obj(obj(s['rpc'])['ResumeActor']);
  const deliveries = obj(s['deliveries']);
  return {
    resumeCalls: sumValues(resume),
    resumeByCode: numbers(resume),
    actorsByStatus: numbers(s['actors']),
    deliveriesTotal: num(deliveries['total']),
    duplicates: num(deliveries['duplicates']),
    process: readProcess(s),
  };
}

export function readExtproc(stats: unknown): ExtprocCounters {
  const s = obj(stats);
  return { streams: num(obj(s['streams'])['total']), process: readProcess(s) };
}

/** The bench's summary of a proxy's `/stats` (read as `StatsReading`: the field names are the proxy's own, checked at build). */
export function readProxy(stats: unknown): ProxyCounters {
  const s = obj(stats) as StatsReading;
  const cache = obj(s.cache);
  const upstream = obj(s.upstream);
  const extproc = obj(s.extproc);
  return {
    requests: num(obj(s.requests).total),
    extprocStreams: num(extproc.streams),
    cacheEnabled: cache.enabled === true,
    hits: num(cache.hits),
    misses: num(cache.misses),
    coalesced: num(obj(cache.coalesced).hit),
    entries: num(cache.entries),
    evictions: numbers(cache.evictions),
    reruns: numbers(s.reruns),
    rerunsByAttempt: numbers(obj(s.rerunAttempts).byAttempt),
    connectFailures: num(upstream.connectFailures),
    resets: num(upstream.resets),
    resetsNotReplayable: num(upstream.resetsNotReplayable),
    outlierEjections: sumValues(obj(upstream.outliers).ejections),
    failedFast: num(obj(upstream.outliers).failedFast),
    extprocRetries: num(obj(extproc.retries).retried),
    resolverResumeCalls: sumValues(obj(s.resolver).resumeCalls),
    process: readProcess(s),
  };
}

/** `host:port` or a URL → a base URL without trailing slash. */
export function baseUrl(address: string): string {
  const withScheme = /^https?:\/\//.test(address) ? address : `http://${address}`;
  return withScheme.replace(/\/+$/, '');
}

async function call(method: string, url: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  if (text.length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** One component's admin API. */
export class Admin {
  readonly base: string;

  constructor(address: string) {
    this.base = baseUrl(address);
  }

  stats(): Promise<unknown> {
    return call('GET', `${this.base}/stats`);
  }

  /** Zeros the component's /stats counters; answers the fresh /stats document. */
  reset(): Promise<unknown> {
    return call('POST', `${this.base}/stats/reset`);
  }

  get(path: string): Promise<unknown> {
    return call('GET', `${this.base}${path}`);
  }

  post(path: string, body?: unknown): Promise<unknown> {
    return call('POST', `${this.base}${path}`, body ?? {});
  }

  put(path: string, body: unknown): Promise<unknown> {
    return call('PUT', `${this.base}${path}`, body);
  }

  del(path: string): Promise<unknown> {
    return call('DELETE', `${this.base}${path}`);
  }
}

export interface ActorPlacement {
  readonly atespace: string;
  readonly name: string;
  readonly status: string;
  readonly workerIp: string | null;
}

/** Reads the stub's GET /actors answer (an array, or {actors: [...]}) into placements. */
export function readActors(body: unknown): ActorPlacement[] {
  const list = Array.isArray(body) ? body : Array.isArray(obj(body)['actors']) ? (obj(body)['actors'] as unknown[]) : [];
  return list.map((item) => {
    const a = obj(item);
    const ip = a['workerIp'] ?? a['worker_ip'] ?? a['worker'];
    return {
      atespace: String(a['atespace'] ?? ''),
      name: String(a['name'] ?? ''),
      status: String(a['status'] ?? ''),
      workerIp: typeof ip === 'string' && ip.length > 0 ? ip : null,
    };
  });
}
