/**
 * The proxy's counters: plain numbers bumped on the request path (no allocation, no label hashing). `/stats`
 * reports them minus the baseline taken at the last `POST /stats/reset` (lib/since-reset.ts); `/metrics` reads the
 * lifetime values when scraped, so Prometheus counters never go backwards.
 */
import type { RerunReason } from '../api/filter.js';
import { SinceReset } from '../../lib/since-reset.js';
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
 * The ext_proc client's retries of a miss whose stream could not be opened (`stages/ext-proc/retry-rule.ts`, `retrying-exchange.ts`): fresh
 * streams opened after a failure, requests that got an answer after retrying, requests that gave up at the re-run
 * budget, and requests failed at once because the cap of waiting requests was reached.
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

function byClass(counts: Float64Array): Record<StatusClass, number> {
  const out = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } as Record<StatusClass, number>;
  for (let s = 100; s < 600; s++) {
    const n = counts[s] as number;
    if (n !== 0) out[CLASSES[Math.floor(s / 100) - 1] as StatusClass] += n;
  }
  return out;
}

export interface ProxyStatsBlock {
  readonly requests: { readonly total: number; readonly byStatus: Record<StatusClass, number>; readonly inFlight: number };
  readonly extproc: {
    readonly streams: number;
    readonly active: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly retries: ExtProcRetryTallies & { readonly waiting: number };
  };
  readonly upstream: {
    readonly requests: number;
    readonly byStatus: Record<StatusClass, number>;
    readonly connectFailures: number;
    readonly resets: number;
    readonly resetsNotReplayable: number;
    readonly identityFailures: number;
    readonly tlsReloads: number;
    readonly tlsReloadErrors: number;
    readonly outliers: OutlierTallies & { readonly down: number };
  };
  readonly reruns: Readonly<RerunTallies>;
  readonly rerunAttempts: RerunAttemptsBlock;
  /** Errors the containment boundary caught, by where; each ended one request, stream or tunnel alone. */
  readonly internalErrors: Readonly<InternalErrorTallies>;
}

/** Re-runs by number (`"1"`: first re-runs, `"2"`: second, ...), backoffs waited, and the budget's refusals. */
export interface RerunAttemptsBlock {
  readonly byAttempt: Record<string, number>;
  readonly backoffs: number;
  readonly cancelledInBackoff: number;
  readonly budgetExhausted: number;
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
    const d = this.#sinceReset.current();
    return {
      requests: { total: d.requests, byStatus: byClass(d.requestsByStatus), inFlight: this.live.requestsInFlight },
      extproc: {
        ...d.extproc,
        active: this.live.extproc.active,
        retries: { ...d.extprocRetries, waiting: this.live.extprocRetriesWaiting },
      },
      upstream: {
        requests: d.upstreamRequests,
        byStatus: byClass(d.upstreamByStatus),
        connectFailures: d.upstreamConnectFailures,
        resets: d.upstreamResets,
        resetsNotReplayable: d.upstreamResetsNotReplayable,
        identityFailures: d.upstreamIdentityFailures,
        tlsReloads: d.upstreamTlsReloads,
        tlsReloadErrors: d.upstreamTlsReloadErrors,
        outliers: { down: this.live.outliersDown(), ...d.outliers },
      },
      reruns: { ...d.reruns },
      rerunAttempts: {
        byAttempt: byAttempt(d.rerunsByAttempt, this.live.maxReruns),
        backoffs: d.rerunBackoffs,
        cancelledInBackoff: d.rerunBackoffsCancelled,
        budgetExhausted: d.rerunBudgetExhausted,
      },
      internalErrors: { ...d.internalErrors },
    };
  }
}
