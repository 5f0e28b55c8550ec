/**
 * The proxy's counters, declared once (`PROXY_STATS`), from which `/stats`, `/metrics` and the counters' storage all
 * derive: a `kind: 'tally'` declaration is its own storage (`counters.tallies`, created once from the tree by
 * `talliesOf`, a plain number at the declaration's path bumped on the request path: no allocation, no label hashing),
 * so a new counter is its declaration and its `++`. `/stats` reports them minus the baseline taken at the last
 * `POST /stats/reset` (lib/since-reset.ts); `/metrics` reads the lifetime values when scraped, so Prometheus
 * counters never go backwards. Counts by exact status code and by re-run number (index-keyed arrays) and the levels
 * (in flight, active) are kept beside the tallies.
 */
import type { RerunReason } from '../api/filter.js';
import { SinceReset } from '../../lib/since-reset.js';
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../lib/stats/declare.js';
import { statsBlock } from '../../lib/stats/derive.js';
import { WorkerMetrics } from './worker-metrics.js';
import { ExtProcRoundTrips } from './extproc-round-trips.js';
import { CONTAINMENT_SITES } from './containment.js';

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

const CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** Re-runs by reason: a stale 421 from the worker, a connect failure, a reset before the first byte. */
const RERUN_REASONS = Object.freeze(['stale', 'connect', 'reset'] as const satisfies readonly RerunReason[]);

/** The highest `--max-reruns` (the per-attempt counters have one slot per re-run number). */
export const MAX_RERUN_ATTEMPTS = 10;

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

/** The counters kept by index (status codes, re-run numbers), beside the tallies. */
export interface IndexedCounts {
  /** Client responses by exact status (index = status code). */
  readonly requestsByStatus: Float64Array;
  /** Upstream answers by exact status (index = status code). */
  readonly upstreamByStatus: Float64Array;
  /** Re-runs by their number within one request (index 1 = first re-run; up to --max-reruns, at most 10). */
  readonly rerunsByAttempt: Float64Array;
}

/** The levels the declarations read now, whatever the view. */
export interface ProxyLevels {
  readonly requestsInFlight: number;
  readonly extprocStreamsActive: number;
  readonly extprocRetriesWaiting: number;
  outliersDown(): number;
  readonly maxReruns: number;
}

/**
 * What the declarations read: `tallies` rooted as `PROXY_STATS` and `counts` (since the last reset for `/stats`,
 * lifetime for `/metrics`), and `live`, the levels now (such as requests in flight).
 */
export interface ProxyView {
  readonly tallies: object;
  readonly counts: IndexedCounts;
  readonly live: ProxyLevels;
}

const RETRY_OUTCOMES = {
  kind: 'tally',
  name: 'extproc_retry_outcomes_total',
  help: 'Requests that retried their ext_proc stream, by how it ended: recovered (answered), budget (gave up at --rerun-budget-ms), shed (failed at once: --extproc-retry-max-waiting requests were waiting).',
} as const;

/**
 * The proxy's own counters, declared once: the `/stats` blocks `requests`, `extproc`, `upstream`, `reruns`,
 * `rerunAttempts` and `internalErrors`, and their `actor_edge_proxy_…` metrics (lib/stats/declare.ts).
 */
export const PROXY_STATS = declare<ProxyView>()({
  requests: {
    total: { kind: 'tally', exported: false, help: 'Client requests answered (the sum of byStatus; Prometheus: the sum of actor_edge_proxy_requests_total).' },
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
    streams: { kind: 'tally', help: 'ext_proc Process streams opened (one per request that reached ext_proc, and one per refresh-ahead).' },
    active: { kind: 'gauge', name: 'extproc_streams_active', help: 'ext_proc streams open now.', read: (v) => v.live.extprocStreamsActive },
    errors: { kind: 'tally', help: 'ext_proc streams that ended with a gRPC error.' },
    timeouts: { kind: 'tally', help: 'ext_proc messages not answered within the message timeout.' },
    retries: {
      retried: {
        kind: 'tally',
        name: 'extproc_retries_total',
        help: 'Fresh ext_proc streams opened for a miss whose stream could not be opened or lost its connection (UNAVAILABLE, or an HTTP/2 INTERNAL_ERROR reset, before any answer), within --rerun-budget-ms.',
      },
      recovered: { ...RETRY_OUTCOMES, labels: { outcome: 'recovered' } },
      budgetExhausted: { ...RETRY_OUTCOMES, labels: { outcome: 'budget' } },
      shed: { ...RETRY_OUTCOMES, labels: { outcome: 'shed' } },
      waiting: {
        kind: 'gauge',
        name: 'extproc_retries_active',
        help: 'Requests waiting now to retry their ext_proc stream (/stats extproc.retries.waiting).',
        read: (v) => v.live.extprocRetriesWaiting,
      },
    },
  },
  upstream: {
    requests: { kind: 'tally', exported: false, help: 'Upstream attempts sent (Prometheus: the sum of actor_edge_proxy_upstream_responses_total and the failures).' },
    byStatus: {
      kind: 'counter',
      name: 'upstream_responses_total',
      label: 'code',
      help: 'Upstream response headers received, by status code (stale 421s included).',
      read: (v) => byIndex(v.counts.upstreamByStatus),
      show: byClass,
    },
    connectFailures: { kind: 'tally', help: 'Upstream attempts that could not connect.' },
    resets: { kind: 'tally', help: 'Upstream attempts reset before response headers.' },
    resetsNotReplayable: {
      kind: 'tally',
      help: 'Requests answered 502 PROXY_ERR_UPSTREAM_RESET_AFTER_SEND: the worker reset after the whole request was written and the method is not GET, HEAD or OPTIONS, so it was not re-run (the actor may have received it).',
    },
    identityFailures: { kind: 'tally', help: 'Upstream workers whose certificate failed verification.' },
    tlsReloads: { kind: 'tally', exported: false, help: 'Upstream TLS credential files re-loaded after a change.' },
    tlsReloadErrors: { kind: 'tally', exported: false, help: 'Upstream TLS credential changes that could not be loaded.' },
    outliers: {
      down: {
        kind: 'gauge',
        name: 'upstream_outlier_ejections_active',
        help: 'Worker addresses down now (outlier detection; /stats upstream.outliers.down).',
        read: (v) => v.live.outliersDown(),
      },
      ejections: {
        kind: 'tally',
        name: 'upstream_outlier_ejections_total',
        label: 'reason',
        keys: ['refused', 'reset', 'timeout', 'unreachable'] as const,
        help: 'Worker addresses marked down by outlier detection (the first connect that failed), by reason: refused, reset, timeout, unreachable.',
      },
      failedFast: {
        kind: 'tally',
        name: 'upstream_outlier_failed_fast_total',
        help: 'Requests failed at once, never sent, because their worker address was down (each re-runs as a connect failure).',
      },
      readmissions: {
        kind: 'tally',
        name: 'upstream_outlier_readmissions_total',
        label: 'via',
        keys: ['probe', 'resume'] as const,
        help: 'Down worker addresses let back, by what let them back: a probe that connected, or a resume that named them.',
      },
      probes: {
        kind: 'tally',
        name: 'upstream_outlier_probes_total',
        label: 'result',
        keys: ['ok', 'failed'] as const,
        help: 'Connect probes of down worker addresses, by result.',
      },
    },
  },
  reruns: { kind: 'tally', label: 'reason', keys: RERUN_REASONS, help: 'Requests re-run through the chain, by reason.' },
  rerunAttempts: {
    byAttempt: {
      kind: 'counter',
      name: 'reruns_by_attempt_total',
      label: 'attempt',
      help: 'Re-runs by their number within one request (1: first re-run, 2: second, ... up to --max-reruns).',
      read: (v) => byAttempt(v.counts.rerunsByAttempt, v.live.maxReruns),
    },
    backoffs: { kind: 'tally', name: 'rerun_backoffs_total', help: 'Re-runs that waited a backoff first (the second and later re-runs of a request).' },
    cancelledInBackoff: {
      kind: 'tally',
      name: 'rerun_backoffs_cancelled_total',
      help: 'Requests whose client went away while they waited a re-run backoff.',
    },
    budgetExhausted: { kind: 'tally', name: 'rerun_budget_exhausted_total', help: 'Requests that could have re-run but had spent --rerun-budget-ms.' },
  },
  internalErrors: {
    kind: 'tally',
    label: 'where',
    keys: CONTAINMENT_SITES,
    help: 'Errors inside the proxy that the containment boundary caught, by where the work began; each ended one request, stream or tunnel alone (500 PROXY_ERR_INTERNAL, or a reset).',
  },
});

/**
 * The proxy's tallies, one per tally of `PROXY_STATS` at its path (`upstream.connectFailures`, `reruns.stale`):
 * plain numbers, and records of them for the labelled ones, created once and bumped on the request path.
 */
export type ProxyTallies = TalliesOf<typeof PROXY_STATS>;

/**
 * Outlier detection's tallies (`upstream/outliers.ts`): addresses marked down by the reason of the connect that
 * failed, requests failed at once because their address was down (never sent), addresses let back (by a probe that
 * connected, or a resume that named them), and probes by result.
 */
export type OutlierTallies = ProxyTallies['upstream']['outliers'];

/** The ext_proc client's retries of a miss whose stream could not be opened or lost its connection (`stages/ext-proc/retrying-round-trip.ts`). */
export type ExtProcRetryTallies = ProxyTallies['extproc']['retries'];

/** The proxy's own blocks of `/stats`. */
export type ProxyStatsBlock = StatsOf<typeof PROXY_STATS>;

/**
 * The proxy's counters: the tallies of `PROXY_STATS` (`tallies`), the counts kept by index, and the levels (which go
 * up and down, and are read as they are now).
 */
export class Counters implements IndexedCounts, ProxyLevels {
  readonly tallies: ProxyTallies = talliesOf(PROXY_STATS);
  readonly requestsByStatus = new Float64Array(1000);
  readonly upstreamByStatus = new Float64Array(1000);
  readonly rerunsByAttempt = new Float64Array(MAX_RERUN_ATTEMPTS + 1);
  /** Requests begun and not yet finished (upgrades and tunnels included, until they close). */
  requestsInFlight = 0;
  /** ext_proc streams open now. */
  extprocStreamsActive = 0;
  /** Requests waiting now to retry their ext_proc stream. */
  extprocRetriesWaiting = 0;
  /** Worker addresses down now (outlier detection; read from the router's detector). */
  outliersDown: () => number = () => 0;
  /** Upstream attempts and failures per worker (bounded labels); the router reports each attempt here. */
  readonly workers = new WorkerMetrics();
  /** ext_proc message round trips; the ext_proc client reports each one here. */
  readonly extprocRoundTrips = new ExtProcRoundTrips();

  /** `maxReruns`: the re-run numbers a request can reach (`--max-reruns`), always reported even at 0. */
  constructor(readonly maxReruns = 0) {}

  countResponse(status: number): void {
    this.tallies.requests.total++;
    this.requestsByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }

  countUpstream(status: number): void {
    this.tallies.upstream.requests++;
    this.upstreamByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }
}

/** The lifetime view of `counters` (`/metrics`). */
export function proxyLifetime(counters: Counters): ProxyView {
  return { tallies: counters.tallies, counts: counters, live: counters };
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
    const counts = this.#sinceReset.current();
    return statsBlock(PROXY_STATS, { tallies: counts.tallies, counts, live: this.live });
  }
}
