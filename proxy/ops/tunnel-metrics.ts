/**
 * Prometheus metrics for upgraded connections and CONNECT tunnels, read from `TunnelStats` when scraped. Labels
 * are fixed sets: `kind` (upgrade, connect), `direction` (from_client, to_client), `reason` (the close reasons).
 */
import type { Registry } from 'prom-client';
import { scrapedCounterBy, scrapedGaugeBy, type Sample } from '../../lib/prom-metrics.js';
import { PROXY_METRIC_PREFIX as P } from './metrics.js';
import { CLOSE_REASONS, TUNNEL_KINDS, type TunnelStats } from './tunnel-stats.js';

export function registerTunnelMetrics(registry: Registry, stats: TunnelStats): void {
  scrapedGaugeBy(registry, {
    name: `${P}tunnels_active`,
    help: 'Upgraded connections (kind=upgrade) and CONNECT tunnels (kind=connect) open now.',
    labelNames: ['kind'],
    read: () => TUNNEL_KINDS.map((kind): Sample<'kind'> => [{ kind }, stats.active(kind)]),
  });
  scrapedCounterBy(registry, {
    name: `${P}tunnels_total`,
    help: 'Upgraded connections and CONNECT tunnels opened.',
    labelNames: ['kind'],
    read: () => TUNNEL_KINDS.map((kind): Sample<'kind'> => [{ kind }, stats.tallies[kind].total]),
  });
  scrapedCounterBy(registry, {
    name: `${P}tunnels_refused_total`,
    help: 'Upgrade and CONNECT requests the proxy refused itself (token, target, drain).',
    labelNames: ['kind'],
    read: () => TUNNEL_KINDS.map((kind): Sample<'kind'> => [{ kind }, stats.tallies[kind].refused]),
  });
  scrapedCounterBy(registry, {
    name: `${P}tunnels_closed_total`,
    help: 'Tunnels closed, by kind and reason (client, upstream, idle, drain).',
    labelNames: ['kind', 'reason'],
    read: () => TUNNEL_KINDS.flatMap((kind) => CLOSE_REASONS.map((reason): Sample<'kind' | 'reason'> => [{ kind, reason }, stats.tallies[kind].closed[reason]])),
  });
  scrapedCounterBy(registry, {
    name: `${P}tunnel_bytes_total`,
    help: 'Bytes through tunnels after their handshake, by kind and direction (open tunnels included).',
    labelNames: ['kind', 'direction'],
    read: () => {
      const life = stats.lifetime();
      return TUNNEL_KINDS.flatMap((kind): Sample<'kind' | 'direction'>[] => [
        [{ kind, direction: 'from_client' }, life[kind].bytes.fromClient],
        [{ kind, direction: 'to_client' }, life[kind].bytes.toClient],
      ]);
    },
  });
}
