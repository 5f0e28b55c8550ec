/**
 * Turns what one arm's measured window produced (the client's view plus each process's /stats, read after a
 * reset at the start of the window) into an ArmResult. Pure: the unit tests feed it literal /stats bodies.
 */
import { readExtproc, readProcess, readProxy, readStub } from './admin.js';
import type { LoadResult } from './load.js';
import { per1k } from './report.js';
import type { ArmName, ArmResult, CacheUsage, ComponentUsage } from './types.js';

/** Raw /stats bodies by component name (absent when the arm has no such process or it was unreachable). */
export interface WindowStats {
  readonly proxy?: unknown;
  readonly extproc?: unknown;
  readonly 'apiserver-stub'?: unknown;
  readonly floor?: unknown;
}

export interface ArmExtras {
  readonly warmupResumeCalls?: number;
  readonly suspendedAtStart?: number;
  readonly notes?: readonly string[];
  /** When the arm has no ext_proc by construction (direct, floor, B1, B2), streams are 0 rather than unknown. */
  readonly noExtproc?: boolean;
  /** Report the stub's duplicate deliveries (only meaningful when every request id is unique: churn). */
  readonly countDuplicates?: boolean;
}

/** Successful answers among status counts: HTTP 2xx, or gRPC `OK` (the grpc scenario counts calls by gRPC status). */
export function successes(statusCounts: Readonly<Record<string, number>>): number {
  return Object.entries(statusCounts).reduce((n, [code, c]) => n + (code.startsWith('2') || code === 'OK' ? c : 0), 0);
}

const ORDER = ['proxy', 'floor', 'extproc', 'apiserver-stub'] as const;

export function buildArmResult(name: ArmName, description: string, load: LoadResult, stats: WindowStats, extras: ArmExtras = {}): ArmResult {
  const requests = load.requests;
  const components: ComponentUsage[] = [];
  for (const component of ORDER) {
    const raw = stats[component];
    if (raw === undefined) continue;
    const p = readProcess(raw);
    if (!p) continue;
    const cpuMs = p.cpuUs / 1000;
    components.push({ component, cpuMs, cpuMsPerRequest: requests > 0 ? cpuMs / requests : 0, peakRssBytes: p.maxRssBytes });
  }
  const stub = stats['apiserver-stub'] !== undefined ? readStub(stats['apiserver-stub']) : undefined;
  const proxy = stats.proxy !== undefined ? readProxy(stats.proxy) : undefined;
  const extproc = stats.extproc !== undefined ? readExtproc(stats.extproc) : undefined;
  const resumeCalls = stub ? stub.resumeCalls : null;
  const extprocStreams = extproc ? extproc.streams : proxy ? proxy.extprocStreams : extras.noExtproc ? 0 : null;
  let cache: CacheUsage | undefined;
  if (proxy && proxy.cacheEnabled) {
    const looked = proxy.hits + proxy.misses;
    cache = { hits: proxy.hits, misses: proxy.misses, coalesced: proxy.coalesced, hitRatio: looked > 0 ? proxy.hits / looked : 0, entries: proxy.entries, evictions: proxy.evictions };
  }
  const sum = (r: Readonly<Record<string, number>>): number => Object.values(r).reduce((a, b) => a + b, 0);
  const loadgenCpuMs = load.loadgenCpuMs;
  const result: ArmResult = {
    name,
    description,
    requests,
    durationS: load.durationS,
    rps: load.rps,
    p50Ms: load.latency.p50Ms,
    p90Ms: load.latency.p90Ms,
    p99Ms: load.latency.p99Ms,
    maxMs: load.latency.maxMs,
    meanMs: load.latency.meanMs,
    non2xx: load.non2xx,
    errors: load.errors,
    statusCounts: load.statusCounts,
    resumeCalls,
    extprocStreams,
    resumeCallsPer1k: per1k(resumeCalls, requests),
    extprocStreamsPer1k: per1k(extprocStreams, requests),
    cpuMsPerRequest: components.length && requests > 0 ? components.reduce((a, c) => a + c.cpuMsPerRequest, 0) : null,
    components,
    loadgen: { component: 'loadgen', cpuMs: loadgenCpuMs, cpuMsPerRequest: requests > 0 ? loadgenCpuMs / requests : 0, peakRssBytes: load.loadgenPeakRssBytes },
    ...(cache ? { cache } : {}),
    ...(proxy ? { evictions: sum(proxy.evictions), reruns: sum(proxy.reruns), rerunsByAttempt: proxy.rerunsByAttempt } : {}),
    ...(stub && extras.countDuplicates ? { duplicates: stub.duplicates } : {}),
    ...(extras.warmupResumeCalls !== undefined ? { warmupResumeCalls: extras.warmupResumeCalls } : {}),
    ...(extras.suspendedAtStart !== undefined ? { suspendedAtStart: extras.suspendedAtStart } : {}),
    notes: extras.notes ?? [],
    stats: stats as Readonly<Record<string, unknown>>,
  };
  return result;
}
