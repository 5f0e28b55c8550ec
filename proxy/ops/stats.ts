/**
 * The proxy's counters: plain numbers bumped on the request path (no allocation, no label hashing), and their one
 * declaration (`PROXY_STATS`), from which both `/stats` and `/metrics` derive. `/stats` reports them minus the
 * baseline taken at the last `POST /stats/reset` (lib/since-reset.ts); `/metrics` reads the lifetime values when
 * scraped, so Prometheus counters never go backwards.
 */
import type { RerunReason } from '../api/filter.js';
import { SinceReset, type Tallies } from '../../lib/since-reset.js';
import { declare, type StatsOf } from '../../lib/stats/declare.js';
import { statsBlock } from '../../lib/stats/derive.js';
import { WorkerMetrics } from './worker-metrics.js';
import { ExtProcRoundTrips } from './extproc-round-trips.js';
import { internalErrorTallies, type InternalErrorTallies } from './containment.js';

/**
 * Outlier detection's tallies (`upstream/outliers.ts`): addresses marked down by the reason of the connect that
 * failed, requests failed at once because their address was down (never sent), addresses let back (by a probe that
 * connected, or a resume that named them), and probes by result.
 */
export interface OutlierTallies {
  readonly ejections: { refused: number; reset: number; timeout: number; unreachable: number };
  failedFast: number;
  readonly readmissions: { probe: number; resume: number };
  readonly probes: { ok: number; failed: number };
}

/**
 * The ext_proc client's retries of a miss whose stream could not be opened or lost its connection
 * (`stages/ext-proc/retry-rule.ts`, `retrying-round-trip.ts`): fresh streams opened after a failure, requests that got
 * an answer after retrying, requests that gave up at the re-run budget, and requests failed at once because the cap
 * of waiting requests was reached.
 */
export interface ExtProcRetryTallies {
  retried: number;
  recovered: number;
  budgetExhausted: number;
  shed: number;
}

/** The ext_proc client's streams (`stages/ext-proc/grpc-client.ts`); `active` is a level, the others only go up. */
export type ExtProcStreamTallies = Record<'streams' | 'active' | 'errors' | 'timeouts', number>;

/** Re-runs by reason. */
export type RerunTallies = Record<RerunReason, number>;

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

const CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** The highest `--max-reruns` (the per-attempt counters have one slot per re-run number). */
export const MAX_RERUN_ATTEMPTS = 10;

export class Counters {
  requests = 0;
  /** Requests begun and not yet finished (upgrades and tunnels included, until they close). */
  requestsInFlight = 0;
  /** Client responses by exact status (index = status code). */
  readonly requestsByStatus = new Float64Array(1000);
  /** ext_proc streams opened; of those, open now; streams that ended in a gRPC error; messages not answered in time. */
  readonly extproc: ExtProcStreamTallies = { streams: 0, active: 0, errors: 0, timeouts: 0 };
  /** Upstream attempts sent, and their answers by exact status (index = status code). */
  upstreamRequests = 0;
  readonly upstreamByStatus = new Float64Array(1000);
  /** Upstream attempts whose connection could not be opened, and attempts reset before response headers. */
  upstreamConnectFailures = 0;
  upstreamResets = 0;
  /**
   * Requests answered 502 because their worker reset the connection after the whole request was written and the
   * method may not be sent twice (not GET, HEAD or OPTIONS): not re-run, since the actor may have received it.
   */
  upstreamResetsNotReplayable = 0;
  /** Workers whose certificate failed verification (mTLS). */
  upstreamIdentityFailures = 0;
  /** Upstream TLS credential files re-loaded after a change, and changes that could not be loaded. */
  upstreamTlsReloads = 0;
  upstreamTlsReloadErrors = 0;
  /** Re-runs by reason: a stale 421 from the worker, a connect failure, a reset before the first byte. */
  readonly reruns: RerunTallies = { stale: 0, connect: 0, reset: 0 };
  /** Re-runs by their number within one request (index 1 = first re-run; up to --max-reruns, at most 10). */
  readonly rerunsByAttempt = new Float64Array(MAX_RERUN_ATTEMPTS + 1);
  /** Re-runs that waited a backoff first; of those, requests whose client left during the wait. */
  rerunBackoffs = 0;
  rerunBackoffsCancelled = 0;
  /** Requests that could have re-run but had spent --rerun-budget-ms. */
  rerunBudgetExhausted = 0;
  readonly outliers: OutlierTallies = {
    ejections: { refused: 0, reset: 0, timeout: 0, unreachable: 0 },
    failedFast: 0,
    readmissions: { probe: 0, resume: 0 },
    probes: { ok: 0, failed: 0 },
  };
  /** Worker addresses down now (outlier detection; read from the router's detector). */
  outliersDown: () => number = () => 0;
  readonly extprocRetries: ExtProcRetryTallies = { retried: 0, recovered: 0, budgetExhausted: 0, shed: 0 };
  /** Requests waiting now to retry their ext_proc stream. */
  extprocRetriesWaiting = 0;
  /** Upstream attempts and failures per worker (bounded labels); the router reports each attempt here. */
  readonly workers = new WorkerMetrics();
  /** ext_proc message round trips; the ext_proc client reports each one here. */
  readonly extprocRoundTrips = new ExtProcRoundTrips();
  /** Errors the containment boundary caught, by where (`ops/containment.ts`): each ended one request, stream or tunnel. */
  readonly internalErrors: InternalErrorTallies = internalErrorTallies();

  /** `maxReruns`: the re-run numbers a request can reach (`--max-reruns`), always reported even at 0. */
  constructor(readonly maxReruns = 0) {}

  countResponse(status: number): void {
    this.requests++;
    this.requestsByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }

  countUpstream(status: number): void {
    this.upstreamRequests++;
    this.upstreamByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }
}

/** Status codes (`{"200": n, "503": n}`) folded into their classes. */
export function byClass(byCode: Readonly<Record<string, number>>): Record<StatusClass, number> {
  const out = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } as Record<StatusClass, number>;
  for (const [code, n] of Object.entries(byCode)) {
    const s = Number(code);
    if (s >= 100 && s < 600 && n !== 0) out[CLASSES[Math.floor(s / 100) - 1] as StatusClass] += n;
  }
  return out;
}

/** The non-zero slots of an index-keyed tally (`{"200": n, ...}`), keyed by index. */
function byIndex(counts: Float64Array): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] as number;
    if (n > 0) out[String(i)] = n;
  }
  return out;
}

/** `{"1": n, "2": n, ...}` up to the highest re-run number that has a count, and at least up to `upTo`. */
export function byAttempt(counts: Float64Array, upTo: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 1; i < counts.length; i++) {
    const n = counts[i] as number;
    if (i <= upTo || n !== 0) out[String(i)] = n;
  }
  return out;
}

/**
 * What the declarations read: `counts`, the tallies (since the last reset for `/stats`, lifetime for `/metrics`),
 * and `live`, the counters as they are now (levels such as requests in flight).
 */
export interface ProxyView {
  readonly counts: Tallies<Counters>;
  readonly live: Counters;
}

const RETRY_OUTCOMES = {
  kind: 'counter',
  name: 'extproc_retry_outcomes_total',
  help: 'Requests that retried their ext_proc stream, by how it ended: recovered (answered), budget (gave up at --rerun-budget-ms), shed (failed at once: --extproc-retry-max-waiting requests were waiting).',
} as const;

/**
 * The proxy's own counters, declared once: the `/stats` blocks `requests`, `extproc`, `upstream`, `reruns`,
 * `rerunAttempts` and `internalErrors`, and their `actor_edge_proxy_…` metrics (lib/stats/declare.ts).
 */
export const PROXY_STATS = declare<ProxyView>()({
  requests: {
    total: { kind: 'stat', help: 'Client requests answered (the sum of byStatus; Prometheus: the sum of actor_edge_proxy_requests_total).', read: (v) => v.counts.requests },
    byStatus: {
      kind: 'counter',
      name: 'requests_total',
      label: 'code',
      help: 'Client requests answered, by status code (499: the client went away first).',
      read: (v) => byIndex(v.counts.requestsByStatus),
      show: byClass,
    },
    inFlight: { kind: 'gauge', help: 'Client requests begun and not yet finished (upgrades and tunnels included, until they close).', read: (v) => v.live.requestsInFlight },
  },
  extproc: {
    streams: { kind: 'counter', help: 'ext_proc Process streams opened (one per request that reached ext_proc, and one per refresh-ahead).', read: (v) => v.counts.extproc.streams },
    active: { kind: 'gauge', name: 'extproc_streams_active', help: 'ext_proc streams open now.', read: (v) => v.live.extproc.active },
    errors: { kind: 'counter', help: 'ext_proc streams that ended with a gRPC error.', read: (v) => v.counts.extproc.errors },
    timeouts: { kind: 'counter', help: 'ext_proc messages not answered within the message timeout.', read: (v) => v.counts.extproc.timeouts },
    retries: {
      retried: {
        kind: 'counter',
        name: 'extproc_retries_total',
        help: 'Fresh ext_proc streams opened for a miss whose stream could not be opened or lost its connection (UNAVAILABLE, or an HTTP/2 INTERNAL_ERROR reset, before any answer), within --rerun-budget-ms.',
        read: (v) => v.counts.extprocRetries.retried,
      },
      recovered: { ...RETRY_OUTCOMES, labels: { outcome: 'recovered' }, read: (v) => v.counts.extprocRetries.recovered },
      budgetExhausted: { ...RETRY_OUTCOMES, labels: { outcome: 'budget' }, read: (v) => v.counts.extprocRetries.budgetExhausted },
      shed: { ...RETRY_OUTCOMES, labels: { outcome: 'shed' }, read: (v) => v.counts.extprocRetries.shed },
      waiting: {
        kind: 'gauge',
        name: 'extproc_retries_active',
        help: 'Requests waiting now to retry their ext_proc stream (/stats extproc.retries.waiting).',
        read: (v) => v.live.extprocRetriesWaiting,
      },
    },
  },
  upstream: {
    requests: { kind: 'stat', help: 'Upstream attempts sent (Prometheus: the sum of actor_edge_proxy_upstream_responses_total and the failures).', read: (v) => v.counts.upstreamRequests },
    byStatus: {
      kind: 'counter',
      name: 'upstream_responses_total',
      label: 'code',
      help: 'Upstream response headers received, by status code (stale 421s included).',
      read: (v) => byIndex(v.counts.upstreamByStatus),
      show: byClass,
    },
    connectFailures: { kind: 'counter', help: 'Upstream attempts that could not connect.', read: (v) => v.counts.upstreamConnectFailures },
    resets: { kind: 'counter', help: 'Upstream attempts reset before response headers.', read: (v) => v.counts.upstreamResets },
    resetsNotReplayable: {
      kind: 'counter',
      help: 'Requests answered 502 PROXY_ERR_UPSTREAM_RESET_AFTER_SEND: the worker reset after the whole request was written and the method is not GET, HEAD or OPTIONS, so it was not re-run (the actor may have received it).',
      read: (v) => v.counts.upstreamResetsNotReplayable,
    },
    identityFailures: { kind: 'counter', help: 'Upstream workers whose certificate failed verification.', read: (v) => v.counts.upstreamIdentityFailures },
    tlsReloads: { kind: 'stat', help: 'Upstream TLS credential files re-loaded after a change.', read: (v) => v.counts.upstreamTlsReloads },
    tlsReloadErrors: { kind: 'stat', help: 'Upstream TLS credential changes that could not be loaded.', read: (v) => v.counts.upstreamTlsReloadErrors },
    outliers: {
      down: {
        kind: 'gauge',
        name: 'upstream_outlier_ejections_active',
        help: 'Worker addresses down now (outlier detection; /stats upstream.outliers.down).',
        read: (v) => v.live.outliersDown(),
      },
      ejections: {
        kind: 'counter',
        name: 'upstream_outlier_ejections_total',
        label: 'reason',
        help: 'Worker addresses marked down by outlier detection (the first connect that failed), by reason: refused, reset, timeout, unreachable.',
        read: (v) => ({ ...v.counts.outliers.ejections }),
      },
      failedFast: {
        kind: 'counter',
        name: 'upstream_outlier_failed_fast_total',
        help: 'Requests failed at once, never sent, because their worker address was down (each re-runs as a connect failure).',
        read: (v) => v.counts.outliers.failedFast,
      },
      readmissions: {
        kind: 'counter',
        name: 'upstream_outlier_readmissions_total',
        label: 'via',
        help: 'Down worker addresses let back, by what let them back: a probe that connected, or a resume that named them.',
        read: (v) => ({ ...v.counts.outliers.readmissions }),
      },
      probes: {
        kind: 'counter',
        name: 'upstream_outlier_probes_total',
        label: 'result',
        help: 'Connect probes of down worker addresses, by result.',
        read: (v) => ({ ...v.counts.outliers.probes }),
      },
    },
  },
  reruns: { kind: 'counter', label: 'reason', help: 'Requests re-run through the chain, by reason.', read: (v) => ({ ...v.counts.reruns }) },
  rerunAttempts: {
    byAttempt: {
      kind: 'counter',
      name: 'reruns_by_attempt_total',
      label: 'attempt',
      help: 'Re-runs by their number within one request (1: first re-run, 2: second, ... up to --max-reruns).',
      read: (v) => byAttempt(v.counts.rerunsByAttempt, v.live.maxReruns),
    },
    backoffs: { kind: 'counter', name: 'rerun_backoffs_total', help: 'Re-runs that waited a backoff first (the second and later re-runs of a request).', read: (v) => v.counts.rerunBackoffs },
    cancelledInBackoff: {
      kind: 'counter',
      name: 'rerun_backoffs_cancelled_total',
      help: 'Requests whose client went away while they waited a re-run backoff.',
      read: (v) => v.counts.rerunBackoffsCancelled,
    },
    budgetExhausted: { kind: 'counter', name: 'rerun_budget_exhausted_total', help: 'Requests that could have re-run but had spent --rerun-budget-ms.', read: (v) => v.counts.rerunBudgetExhausted },
  },
  internalErrors: {
    kind: 'counter',
    label: 'where',
    help: 'Errors inside the proxy that the containment boundary caught, by where the work began; each ended one request, stream or tunnel alone (500 PROXY_ERR_INTERNAL, or a reset).',
    read: (v) => ({ ...v.counts.internalErrors }),
  },
});

/** The proxy's own blocks of `/stats`. */
export type ProxyStatsBlock = StatsOf<typeof PROXY_STATS>;

/** The live counters plus the `/stats` view of them. */
export class ProxyStats {
  readonly live: Counters;
  readonly #sinceReset: SinceReset<Counters>;

  /** `maxReruns`: the re-run numbers always listed in `/stats` and `/metrics` (those a request can reach). */
  constructor(maxReruns = 0) {
    this.live = new Counters(maxReruns);
    this.#sinceReset = new SinceReset(() => this.live);
  }

  reset(): void {
    this.#sinceReset.reset();
  }

  snapshot(): ProxyStatsBlock {
    return statsBlock(PROXY_STATS, { counts: this.#sinceReset.current(), live: this.live });
  }
}
