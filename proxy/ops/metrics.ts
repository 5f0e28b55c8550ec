/**
 * The proxy's Prometheus metrics (prom-client, one registry per process, registered through lib/prom-metrics.ts).
 * Counters are read from the plain request-path counters when scraped, so the request path pays nothing for them;
 * only the duration histogram is observed per request. Labels are fixed sets: status codes, re-run reasons and
 * re-run numbers, never anything a client names.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { histogram, samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, type Sample } from '../../lib/prom-metrics.js';
import type { Counters } from './stats.js';

export interface ProxyMetrics {
  readonly registry: Registry;
  /** Observes one finished client request. */
  observeDuration(seconds: number): void;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The non-zero slots of an index-keyed tally (from `from` on) as samples labelled with their index. */
function byIndex<L extends string>(label: L, counts: Float64Array, from = 0): Sample<L>[] {
  const out: Sample<L>[] = [];
  for (let i = from; i < counts.length; i++) {
    const n = counts[i] as number;
    if (n > 0) out.push([{ [label]: String(i) } as Record<L, string>, n]);
  }
  return out;
}

export function createProxyMetrics(counters: Counters, registry = new Registry()): ProxyMetrics {
  collectDefaultMetrics({ register: registry });
  const c = counters;
  scrapedCounter(registry, { name: 'proxy_extproc_streams_total', help: 'ext_proc Process streams opened (one per request that reached ext_proc).', read: () => c.extprocStreams });
  scrapedCounter(registry, { name: 'proxy_extproc_errors_total', help: 'ext_proc streams that ended with a gRPC error.', read: () => c.extprocErrors });
  scrapedCounter(registry, { name: 'proxy_extproc_timeouts_total', help: 'ext_proc messages not answered within the message timeout.', read: () => c.extprocTimeouts });
  scrapedCounter(registry, { name: 'proxy_upstream_connect_failures_total', help: 'Upstream attempts that could not connect.', read: () => c.upstreamConnectFailures });
  scrapedCounter(registry, {
    name: 'proxy_upstream_identity_failures_total',
    help: 'Upstream workers whose certificate failed verification.',
    read: () => c.upstreamIdentityFailures,
  });
  scrapedCounter(registry, { name: 'proxy_upstream_resets_total', help: 'Upstream attempts reset before response headers.', read: () => c.upstreamResets });
  scrapedCounter(registry, {
    name: 'proxy_rerun_backoffs_total',
    help: 'Re-runs that waited a backoff first (the second and later re-runs of a request).',
    read: () => c.rerunBackoffs,
  });
  scrapedCounter(registry, {
    name: 'proxy_rerun_backoffs_cancelled_total',
    help: 'Requests whose client went away while they waited a re-run backoff.',
    read: () => c.rerunBackoffsCancelled,
  });
  scrapedCounter(registry, {
    name: 'proxy_rerun_budget_exhausted_total',
    help: 'Requests that could have re-run but had spent --rerun-budget-ms.',
    read: () => c.rerunBudgetExhausted,
  });
  scrapedGauge(registry, { name: 'proxy_extproc_active_streams', help: 'ext_proc streams open now.', read: () => c.extprocActive });
  scrapedGauge(registry, {
    name: 'proxy_requests_in_flight',
    help: 'Client requests begun and not yet finished (upgrades and tunnels included, until they close).',
    read: () => c.requestsInFlight,
  });
  scrapedCounterBy(registry, {
    name: 'proxy_requests_total',
    help: 'Client requests answered, by status code (499: the client went away first).',
    labelNames: ['code'],
    read: () => byIndex('code', c.requestsByStatus),
  });
  scrapedCounterBy(registry, {
    name: 'proxy_upstream_responses_total',
    help: 'Upstream response headers received, by status code (stale 421s included).',
    labelNames: ['code'],
    read: () => byIndex('code', c.upstreamByStatus),
  });
  scrapedCounterBy(registry, {
    name: 'proxy_reruns_total',
    help: 'Requests re-run through the chain, by reason.',
    labelNames: ['reason'],
    read: () => samplesBy('reason', { stale: c.rerunsStale, connect: c.rerunsConnect, reset: c.rerunsReset }),
  });
  const duration = histogram(registry, {
    name: 'proxy_request_duration_seconds',
    help: 'Time from request head received to response finished.',
    buckets: DURATION_BUCKETS,
  });
  scrapedCounterBy(registry, {
    name: 'proxy_reruns_by_attempt_total',
    help: 'Re-runs by their number within one request (1: first re-run, 2: second, ...).',
    labelNames: ['attempt'],
    read: () => byIndex('attempt', c.rerunsByAttempt, 1),
  });
  return {
    registry,
    observeDuration: (seconds: number) => duration.observe(seconds),
  };
}
