/**
 * The proxy's Prometheus metrics (prom-client, one registry per process, registered through lib/prom-metrics.ts).
 * Counters are read from the plain request-path counters when scraped, so the request path pays nothing for them;
 * only the duration histogram is observed per request. Labels are fixed sets: status codes, re-run reasons, never
 * anything a client names.
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

function byCode(counts: Float64Array): Sample<'code'>[] {
  const out: Sample<'code'>[] = [];
  for (let s = 0; s < counts.length; s++) {
    const n = counts[s] as number;
    if (n > 0) out.push([{ code: String(s) }, n]);
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
  scrapedCounter(registry, { name: 'proxy_upstream_resets_total', help: 'Upstream attempts reset before response headers.', read: () => c.upstreamResets });
  scrapedGauge(registry, { name: 'proxy_extproc_active_streams', help: 'ext_proc streams open now.', read: () => c.extprocActive });
  scrapedCounterBy(registry, {
    name: 'proxy_requests_total',
    help: 'Client requests answered, by status code (499: the client went away first).',
    labelNames: ['code'],
    read: () => byCode(c.requestsByStatus),
  });
  scrapedCounterBy(registry, {
    name: 'proxy_upstream_responses_total',
    help: 'Upstream response headers received, by status code (stale 421s included).',
    labelNames: ['code'],
    read: () => byCode(c.upstreamByStatus),
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
  return {
    registry,
    observeDuration: (seconds: number) => duration.observe(seconds),
  };
}
