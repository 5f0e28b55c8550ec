/**
 * The type of the proxy's `GET /stats` document, derived from the blocks' declarations (`PROXY_STATS` in
 * ops/stats.ts, `CACHE_STATS` in stages/actor-cache/counters.ts, `RESOLVER_STATS`, `TUNNEL_STATS`, `OVERLOAD_STATS`,
 * `OFFLOAD_STATS`, `EGRESS_STATS`, `EGRESS_CACHE_STATS` beside their components); only `process` is typed by
 * hand. What the benchmark,
 * the tests and the dashboard read `/stats` as: a renamed or removed counter breaks their build, not their numbers.
 * Keys in the document's order (`statsDocument`, server.ts).
 */
import type { ProcessStats } from '../../lib/process-stats.js';
import type { ProxyStatsBlock } from '../ops/stats.js';
import type { CacheStatsBlock } from '../stages/actor-cache/stats.js';
import type { ResolverStatsBlock } from '../stages/resolver-stats.js';
import type { TunnelStatsBlock } from '../ops/tunnel-stats.js';
import type { OverloadStatsBlock } from '../ops/overload/stats.js';
import type { EgressStatsBlock } from '../egress/egress-stats.js';
import type { EgressCacheStatsBlock } from '../egress/egress-cache-stats.js';
import type { OffloadStatsBlock } from '../chain/offload/offload-stats.js';

export interface StatsDocument {
  readonly requests: ProxyStatsBlock['requests'];
  readonly extproc: ProxyStatsBlock['extproc'];
  readonly upstream: ProxyStatsBlock['upstream'];
  readonly cache: CacheStatsBlock;
  readonly reruns: ProxyStatsBlock['reruns'];
  readonly rerunAttempts: ProxyStatsBlock['rerunAttempts'];
  readonly resolver: ResolverStatsBlock;
  /** The egress verdict cache. */
  readonly egress: { readonly cache: EgressCacheStatsBlock };
  readonly tunnels: TunnelStatsBlock;
  readonly overload: OverloadStatsBlock;
  /** The filters' worker pool. */
  readonly filterOffload: OffloadStatsBlock;
  /** With `--egress-listen`. */
  readonly egressTunnels?: EgressStatsBlock;
  readonly internalErrors: ProxyStatsBlock['internalErrors'];
  readonly process: ProcessStats;
  /** The cluster primary's document (`--workers N`): how many workers' documents it summed. */
  readonly workers?: number;
}

/**
 * A `/stats` document as a reader that must tolerate another build gets it (the benchmark compares builds side by
 * side; the dashboard reads a cluster primary's sum): every field may be missing. The names are still checked.
 */
export type StatsReading = DeepPartial<StatsDocument>;

type DeepPartial<T> = T extends number | string | boolean | null ? T : { readonly [K in keyof T]?: DeepPartial<T[K]> };
