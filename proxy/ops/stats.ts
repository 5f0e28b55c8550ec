/**
 * The proxy's counters: plain numbers bumped on the request path (no allocation, no label hashing). `/stats`
 * reports them minus the baseline taken at the last `POST /stats/reset`; `/metrics` reads the lifetime values
 * when scraped, so Prometheus counters never go backwards.
 */

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

const CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];

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
  rerunsStale = 0;
  rerunsConnect = 0;
  rerunsReset = 0;

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
  };
  readonly reruns: { readonly stale: number; readonly connect: number; readonly reset: number };
}

/** The live counters plus the `/stats` view of them. */
export class ProxyStats {
  readonly live = new Counters();
  #baseline: Counters = new Counters();

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
      },
      reruns: { stale: l.rerunsStale - b.rerunsStale, connect: l.rerunsConnect - b.rerunsConnect, reset: l.rerunsReset - b.rerunsReset },
    };
  }
}
