/**
 * The proxy's Prometheus metrics (prom-client, one registry per process, registered through lib/prom-metrics.ts,
 * named `actor_edge_proxy_…`). Counters are read from the plain request-path counters when scraped, so the
 * request path pays nothing for them; only the histograms are observed as things happen: the request duration per
 * finished request (pre-indexed bucket counters, no label hashing: `indexedHistogram`), the ext_proc round trip
 * per message. Labels are fixed sets: status codes, re-run reasons and numbers, cache outcomes, protocols, ext_proc
 * message kinds and results, and a bounded set of worker addresses (ops/worker-metrics.ts); never anything a
 * client names.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { histogram, indexedHistogram, metricPrefix, registerBuildInfo, scrapedCounterBy, type Sample } from '../../lib/prom-metrics.js';
import { registerDeclared } from '../../lib/stats/derive.js';
import type { ClientProtocol } from '../api/filter.js';
import { PROXY_STATS, proxyLifetime, type Counters } from './stats.js';
import { WORKER_ERROR_REASONS, type WorkerErrorReason } from './worker-metrics.js';

export const PROXY_METRIC_PREFIX = metricPrefix('proxy');
const P = PROXY_METRIC_PREFIX;

/** The `cache` label of the request duration: how the actor cache served the request (`none`: cache off, or not an actor). */
export type CacheLabel = 'hit' | 'miss' | 'rerun' | 'none';
const CACHE_LABELS: readonly CacheLabel[] = Object.freeze(['hit', 'miss', 'rerun', 'none']);

/** The `protocol` label: the client's protocol for the request. */
export type ProtocolLabel = ClientProtocol;
const PROTOCOL_LABELS: readonly ProtocolLabel[] = Object.freeze(['http/1.1', 'h2']);

/** Each label value's position in its list. */
function positions<V extends string>(values: readonly V[]): Readonly<Record<V, number>> {
  return Object.freeze(Object.fromEntries(values.map((v, i) => [v, i]))) as Record<V, number>;
}
const CACHE_INDEX = positions(CACHE_LABELS);
const PROTOCOL_INDEX = positions(PROTOCOL_LABELS);

/** The duration histogram's label sets, in `observeRequest`'s index order (cache outcome major, protocol minor). */
const DURATION_SERIES = Object.freeze(CACHE_LABELS.flatMap((cache) => PROTOCOL_LABELS.map((protocol) => Object.freeze({ cache, protocol }))));

/**
 * The `cache` label for the actor-cache stage's outcome of a request (its access-log `cache` field; undefined
 * when the cache is off or the host names no actor). A request that waited for another request's miss of the same
 * actor (`coalesced`) paid a miss's latency: it is a `miss`.
 */
export function cacheLabelOf(outcome: string | undefined): CacheLabel {
  switch (outcome) {
    case 'hit':
      return 'hit';
    case 'miss':
    case 'coalesced':
      return 'miss';
    case 'rerun':
      return 'rerun';
    default:
      return 'none';
  }
}

export interface ProxyMetrics {
  readonly registry: Registry;
  /**
   * Observes one finished client request: `actor_edge_proxy_request_duration_seconds{cache,protocol}`. Called once
   * per request, when the request lifecycle finishes it (its `observe`, which `proxy-process.ts` wires), with the
   * cache outcome (`cacheLabelOf(<actor-cache outcome>)`) and the client's protocol. Cheap: no label hashing.
   */
  observeRequest(seconds: number, cache: CacheLabel, protocol: ProtocolLabel): void;
  /**
   * The request-duration histogram's lifetime counts by cache outcome, both protocols summed: one count per bucket of
   * `DURATION_BUCKETS` (not cumulative), then the count above the highest. Read by the history sampler
   * (`stats-history.ts`), once a second, off the request path.
   */
  durationCounts(): Record<CacheLabel, number[]>;
}

/** Request durations, 0.5 ms … 30 s: the hit path sits in the first buckets, misses and re-runs further up. */
export const DURATION_BUCKETS = Object.freeze([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);
/** ext_proc round trips, 0.25 ms … 30 s (a resume of a suspended actor takes the upper ones). */
export const ROUND_TRIP_BUCKETS = Object.freeze([0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);

/**
 * The proxy's metrics that have no place in `/stats`, each with where its numbers are read instead. Every other
 * metric of the proxy is declared with its `/stats` value (`PROXY_STATS`, the stages' declarations).
 */
export const METRICS_WITHOUT_STATS: Readonly<Record<string, string>> = Object.freeze({
  [`${P}build_info`]: 'a constant 1 labelled with the build; GET / names the version',
  [`${P}request_duration_seconds`]: 'a distribution, observed per request: /stats/history charts it',
  [`${P}extproc_round_trip_seconds`]: 'a distribution, observed per ext_proc message',
  [`${P}filter_offload_latency_seconds`]: 'a distribution, observed per offloaded filter call',
  [`${P}ready`]: 'a level of the process, not a count: GET /ready answers it (200, or 503 with the reasons)',
  [`${P}resolver_health_checks_total`]: "the readiness probe's checks of the resolver: GET /ready answers their latest result",
  [`${P}tls_certificate_expiry_seconds`]: 'read from the certificate files loaded (lib/tls/expiry.ts, the same gauge in every component); a warning is logged under --cert-expiry-warning-hours',
  [`${P}worker_requests_total`]: 'per worker address (a bounded, not a fixed, label set): GET /upstreams',
  [`${P}worker_errors_total`]: 'per worker address and reason: GET /upstreams',
});

export function createProxyMetrics(counters: Counters, registry = new Registry()): ProxyMetrics {
  collectDefaultMetrics({ register: registry });
  registerBuildInfo(registry, 'proxy');
  const c = counters;
  // Every counter and gauge of the proxy's own /stats blocks, from their one declaration.
  registerDeclared(registry, P, PROXY_STATS, { lifetime: () => proxyLifetime(c) });
  const roundTrips = histogram(registry, {
    name: `${P}extproc_round_trip_seconds`,
    help: 'ext_proc message round trips, from writing the message to its answer (result=response), the stream\'s end (closed, error), the message timeout (timeout) or the request going away (aborted).',
    labelNames: ['message', 'result'],
    buckets: ROUND_TRIP_BUCKETS,
  });
  c.extprocRoundTrips.attach((message, result, seconds) => roundTrips.observe({ message, result }, seconds));
  // Per worker address: served at /upstreams, not in /stats (its label set is bounded, not fixed).
  scrapedCounterBy(registry, {
    name: `${P}worker_requests_total`,
    help: `Upstream attempts per worker address (at most ${c.workers.maxWorkers} addresses by name, the rest as worker="other").`,
    labelNames: ['worker'],
    read: () => c.workers.counts().map((w): Sample<'worker'> => [{ worker: w.worker }, w.requests]),
  });
  scrapedCounterBy(registry, {
    name: `${P}worker_errors_total`,
    help: 'Upstream attempts per worker that failed because of the worker, by reason: connect, ejected (failed at once: the address was down), reset, timeout, identity, stale (the actor was not there), 5xx.',
    labelNames: ['worker', 'reason'],
    read: () =>
      c.workers.counts().flatMap((w) => WORKER_ERROR_REASONS.map((reason: WorkerErrorReason): Sample<'worker' | 'reason'> => [{ worker: w.worker, reason }, w.errors[reason]])),
  });
  const duration = indexedHistogram<'cache' | 'protocol'>(registry, {
    name: `${P}request_duration_seconds`,
    help: 'Time from request head received to response finished, by cache outcome (hit, miss, rerun, none) and client protocol.',
    labelNames: ['cache', 'protocol'],
    buckets: DURATION_BUCKETS,
    series: DURATION_SERIES,
  });
  return {
    registry,
    observeRequest: (seconds, cache, protocol) => duration.observe(CACHE_INDEX[cache] * PROTOCOL_LABELS.length + PROTOCOL_INDEX[protocol], seconds),
    durationCounts: () => {
      const out = {} as Record<CacheLabel, number[]>;
      for (const cache of CACHE_LABELS) {
        const sum = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
        for (let p = 0; p < PROTOCOL_LABELS.length; p++) {
          const c = duration.counts(CACHE_INDEX[cache] * PROTOCOL_LABELS.length + p);
          for (let i = 0; i < sum.length; i++) sum[i]! += c[i] as number;
        }
        out[cache] = sum;
      }
      return out;
    },
  };
}
