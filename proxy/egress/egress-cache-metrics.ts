/**
 * The egress verdict cache's Prometheus metrics (`actor_edge_proxy_egress_cache_…`), registered through
 * lib/prom-metrics.ts on the process's registry. They read the lifetime counters when scraped (so they never go
 * down, whatever `POST /stats/reset` does to `/stats`). Labels are fixed sets (outcomes, reasons), never actor names
 * or destinations. With `--egress-cache off` they exist too: every one is 0 but `slow_paths_total`.
 */
import type { Registry } from 'prom-client';
import { metricPrefix, samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge } from '../../lib/prom-metrics.js';
import { zeroCounts } from '../stages/actor-cache/counter-set.js';
import { EVICTION_REASONS, VERDICT_COUNTS } from './verdict-cache.js';
import type { EgressCacheParts } from './egress-cache-stats.js';

const P = `${metricPrefix('proxy')}egress_cache_`;

export function registerEgressCacheMetrics(registry: Registry, parts: EgressCacheParts): void {
  const { cache, tallies } = parts;
  const counts = () => cache?.lifetimeStats() ?? { ...zeroCounts(VERDICT_COUNTS), evictions: zeroCounts(EVICTION_REASONS) };
  scrapedCounter(registry, { name: `${P}hits_total`, help: 'Egress CONNECTs answered from a live cached verdict (the slow path skipped).', read: () => counts().hits });
  scrapedCounter(registry, {
    name: `${P}misses_total`,
    help: 'Egress CONNECTs that found no live verdict (they ran the slow path, or joined another CONNECT\'s for the same certificate and destination).',
    read: () => counts().misses,
  });
  scrapedCounter(registry, { name: `${P}joined_total`, help: 'Egress misses that shared a slow path already in flight for the same key.', read: () => counts().joined });
  scrapedCounter(registry, { name: `${P}slow_paths_total`, help: 'Egress slow paths run (ext_proc exchanges); with the cache off, one per CONNECT.', read: () => tallies.lifetimeStats().slowPaths });
  scrapedCounter(registry, { name: `${P}failed_total`, help: 'Egress slow paths that failed (their error went to every CONNECT that shared them; nothing cached).', read: () => tallies.lifetimeStats().failed });
  scrapedCounter(registry, { name: `${P}stored_total`, help: 'Egress verdicts stored by this process.', read: () => counts().stored });
  scrapedCounterBy(registry, {
    name: `${P}not_cached_total`,
    help: 'Egress verdicts a slow path gave that were not stored, by outcome (allowed or denied ones: the certificate expired, or an eviction matched the key while the slow path ran).',
    labelNames: ['outcome'],
    read: () => samplesBy('outcome', tallies.lifetimeStats().notCached),
  });
  scrapedCounterBy(registry, {
    name: `${P}evictions_total`,
    help: 'Egress verdicts removed before they expired, by reason: admin (this process\'s admin), peer (another process\'s eviction), lru (the entry bound), revoked (its actor found not running or unknown while this process held tunnels of its certificate).',
    labelNames: ['reason'],
    read: () => samplesBy('reason', counts().evictions),
  });
  scrapedCounter(registry, { name: `${P}expired_total`, help: 'Egress verdicts removed after their expiry (the TTL or the certificate\'s NotAfter).', read: () => counts().expired });
  scrapedGauge(registry, { name: `${P}entries`, help: 'Live egress verdicts in the cache.', read: () => cache?.size ?? 0 });
  scrapedGauge(registry, { name: `${P}slow_paths_active`, help: 'Egress slow paths in flight now (with the cache on, one per key at most).', read: () => tallies.active });
}
