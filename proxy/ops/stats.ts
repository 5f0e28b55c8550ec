/**
 * The proxy's counters: plain numbers bumped on the request path (no allocation, no label hashing). `/stats`
 * reports them minus the baseline taken at the last `POST /stats/reset`; `/metrics` reads the lifetime values
 * when scraped, so Prometheus counters never go backwards.
 */

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

const CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** The highest `--max-reruns` (the per-attempt counters have one slot per re-run number). */
export const MAX_RERUN_ATTEMPTS = 10;

export class Counters {
  requests = 0;
  /** Client responses by exact status (index = status code). */
  readonly requestsByStatus = new Float64Array(1000);
  extprocStreams = 0;
  extprocActive = 0;
  extprocErrors = 0;
  extprocTimeouts = 0;
  upstreamRequests = 0;
  readonly upstreamByStatus = new Float64Array(1000);
  upstreamConnectFailures = 0;
  upstreamResets = 0;
  /** Workers whose certificate failed verification (mTLS). */
  upstreamIdentityFailures = 0;
  /** Upstream TLS credential files re-loaded after a change, and changes that could not be loaded. */
  upstreamTlsReloads = 0;
  upstreamTlsReloadErrors = 0;
  rerunsStale = 0;
  rerunsConnect = 0;
  rerunsReset = 0;
  /** Re-runs by their number within one request (index 1 = first re-run; up to --max-reruns, at most 10). */
  readonly rerunsByAttempt = new Float64Array(MAX_RERUN_ATTEMPTS + 1);
  /** Re-runs that waited a backoff first; of those, requests whose client left during the wait. */
  rerunBackoffs = 0;
  rerunBackoffsCancelled = 0;
  /** Requests that could have re-run but had spent --rerun-budget-ms. */
  rerunBudgetExhausted = 0;

  countResponse(status: number): void {
    this.requests++;
    this.requestsByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }

  countUpstream(status: number): void {
    this.upstreamRequests++;
    this.upstreamByStatus[status > 0 && status < 1000 ? status : 0]!++;
  }

  clone(): Counters {
    const c = new Counters();
    Object.assign(c, this);
    (c as { requestsByStatus: Float64Array }).requestsByStatus = this.requestsByStatus.slice();
    (c as { upstreamByStatus: Float64Array }).upstreamByStatus = this.upstreamByStatus.slice();
    (c as { rerunsByAttempt: Float64Array }).rerunsByAttempt = this.rerunsByAttempt.slice();
    return c;
  }
}

function byClass(counts: Float64Array, base: Float64Array | undefined): Record<StatusClass, number> {
  const out = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } as Record<StatusClass, number>;
  for (let s = 100; s < 600; s++) {
    const n = (counts[s] as number) - (base ? (base[s] as number) : 0);
    if (n !== 0) out[CLASSES[Math.floor(s / 100) - 1] as StatusClass] += n;
  }
  return out;
}

export interface ProxyStatsBlock {
  readonly requests: { readonly total: number; readonly byStatus: Record<StatusClass, number> };
  readonly extproc: { readonly streams: number; readonly active: number; readonly errors: number; readonly timeouts: number };
  readonly upstream: {
    readonly requests: number;
    readonly byStatus: Record<StatusClass, number>;
    readonly connectFailures: number;
    readonly resets: number;
    readonly identityFailures: number;
    readonly tlsReloads: number;
    readonly tlsReloadErrors: number;
  };
  readonly reruns: { readonly stale: number; readonly connect: number; readonly reset: number };
  readonly rerunAttempts: RerunAttemptsBlock;
}

/** Re-runs by number (`"1"`: first re-runs, `"2"`: second, ...), backoffs waited, and the budget's refusals. */
export interface RerunAttemptsBlock {
  readonly byAttempt: Record<string, number>;
  readonly backoffs: number;
  readonly cancelledInBackoff: number;
  readonly budgetExhausted: number;
}

/** `{"1": n, "2": n, ...}` up to the highest re-run number that has a count, and at least up to `upTo`. */
export function byAttempt(counts: Float64Array, base: Float64Array | undefined, upTo: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 1; i < counts.length; i++) {
    const n = (counts[i] as number) - (base ? (base[i] as number) : 0);
    if (i <= upTo || n !== 0) out[String(i)] = n;
  }
  return out;
}

/** The live counters plus the `/stats` view of them. */
export class ProxyStats {
  readonly live = new Counters();
  #baseline: Counters = new Counters();

  /** `maxReruns`: the re-run numbers always listed in `/stats` (those a request can reach). */
  constructor(private readonly maxReruns = 0) {}

  reset(): void {
    this.#baseline = this.live.clone();
  }

  snapshot(): ProxyStatsBlock {
    const l = this.live;
    const b = this.#baseline;
    return {
      requests: { total: l.requests - b.requests, byStatus: byClass(l.requestsByStatus, b.requestsByStatus) },
      extproc: {
        streams: l.extprocStreams - b.extprocStreams,
        active: l.extprocActive,
        errors: l.extprocErrors - b.extprocErrors,
        timeouts: l.extprocTimeouts - b.extprocTimeouts,
      },
      upstream: {
        requests: l.upstreamRequests - b.upstreamRequests,
        byStatus: byClass(l.upstreamByStatus, b.upstreamByStatus),
        connectFailures: l.upstreamConnectFailures - b.upstreamConnectFailures,
        resets: l.upstreamResets - b.upstreamResets,
        identityFailures: l.upstreamIdentityFailures - b.upstreamIdentityFailures,
        tlsReloads: l.upstreamTlsReloads - b.upstreamTlsReloads,
        tlsReloadErrors: l.upstreamTlsReloadErrors - b.upstreamTlsReloadErrors,
      },
      reruns: { stale: l.rerunsStale - b.rerunsStale, connect: l.rerunsConnect - b.rerunsConnect, reset: l.rerunsReset - b.rerunsReset },
      rerunAttempts: {
        byAttempt: byAttempt(l.rerunsByAttempt, b.rerunsByAttempt, this.maxReruns),
        backoffs: l.rerunBackoffs - b.rerunBackoffs,
        cancelledInBackoff: l.rerunBackoffsCancelled - b.rerunBackoffsCancelled,
        budgetExhausted: l.rerunBudgetExhausted - b.rerunBudgetExhausted,
      },
    };
  }
}
