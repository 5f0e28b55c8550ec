/**
 * The proxy's Prometheus metrics (prom-client, one registry per process). Counters are read from the plain
 * request-path counters when scraped, so the request path pays nothing for them; only the duration histogram is
 * observed per request (a label-less histogram that costs a few array operations). Labels are fixed sets: status codes,
 * re-run reasons and re-run numbers, never anything a client names.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { FastHistogram } from './fast-histogram.js';
import type { Counters } from './stats.js';

export interface ProxyMetrics {
  readonly registry: Registry;
  /** Observes one finished client request. */
  observeDuration(seconds: number): void;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function byCode(counts: Float64Array, inc: (code: string, n: number) => void): void {
  for (let s = 0; s < counts.length; s++) {
    const n = counts[s] as number;
    if (n > 0) inc(String(s), n);
  }
}

export function createProxyMetrics(counters: Counters, registry = new Registry()): ProxyMetrics {
  collectDefaultMetrics({ register: registry });
  const c = counters;
  const simple = (name: string, help: string, read: () => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  };
  simple('proxy_extproc_streams_total', 'ext_proc Process streams opened (one per request that reached ext_proc).', () => c.extprocStreams);
  simple('proxy_extproc_errors_total', 'ext_proc streams that ended with a gRPC error.', () => c.extprocErrors);
  simple('proxy_extproc_timeouts_total', 'ext_proc messages not answered within the message timeout.', () => c.extprocTimeouts);
  simple('proxy_upstream_connect_failures_total', 'Upstream attempts that could not connect.', () => c.upstreamConnectFailures);
  simple('proxy_upstream_identity_failures_total', 'Upstream workers whose certificate failed verification.', () => c.upstreamIdentityFailures);
  simple('proxy_upstream_resets_total', 'Upstream attempts reset before response headers.', () => c.upstreamResets);
  simple('proxy_rerun_backoffs_total', 'Re-runs that waited a backoff first (the second and later re-runs of a request).', () => c.rerunBackoffs);
  simple('proxy_rerun_backoffs_cancelled_total', 'Requests whose client went away while they waited a re-run backoff.', () => c.rerunBackoffsCancelled);
  simple('proxy_rerun_budget_exhausted_total', 'Requests that could have re-run but had spent --rerun-budget-ms.', () => c.rerunBudgetExhausted);
  new Gauge({
    name: 'proxy_extproc_active_streams',
    help: 'ext_proc streams open now.',
    registers: [registry],
    collect() {
      this.set(c.extprocActive);
    },
  });
  new Counter({
    name: 'proxy_requests_total',
    help: 'Client requests answered, by status code (499: the client went away first).',
    labelNames: ['code'],
    registers: [registry],
    collect() {
      this.reset();
      byCode(c.requestsByStatus, (code, n) => this.inc({ code }, n));
    },
  });
  new Counter({
    name: 'proxy_upstream_responses_total',
    help: 'Upstream response headers received, by status code (stale 421s included).',
    labelNames: ['code'],
    registers: [registry],
    collect() {
      this.reset();
      byCode(c.upstreamByStatus, (code, n) => this.inc({ code }, n));
    },
  });
  new Counter({
    name: 'proxy_reruns_total',
    help: 'Requests re-run through the chain, by reason.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ reason: 'stale' }, c.rerunsStale);
      this.inc({ reason: 'connect' }, c.rerunsConnect);
      this.inc({ reason: 'reset' }, c.rerunsReset);
    },
  });
  new Counter({
    name: 'proxy_reruns_by_attempt_total',
    help: 'Re-runs by their number within one request (1: first re-run, 2: second, ...).',
    labelNames: ['attempt'],
    registers: [registry],
    collect() {
      this.reset();
      for (let i = 1; i < c.rerunsByAttempt.length; i++) {
        const n = c.rerunsByAttempt[i] as number;
        if (n > 0) this.inc({ attempt: String(i) }, n);
      }
    },
  });
  const duration = new FastHistogram(
    'proxy_request_duration_seconds',
    'Time from request head received to response finished.',
    DURATION_BUCKETS,
    registry,
  );
  return {
    registry,
    observeDuration: (seconds: number) => duration.observe(seconds),
  };
}
