/**
 * Prometheus metrics of the egress listener, read from `EgressStats` when scraped. Labels are fixed sets: the
 * CONNECT outcomes, the listener's refusal reasons, the certificate refusal reasons, the hostname decisions' sources
 * and refusal reasons, the tunnel close reasons, the re-validation results and the two directions; never anything an
 * actor names.
 */
import type { Registry } from 'prom-client';
import { samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, type Sample } from '../../lib/prom-metrics.js';
import { PROXY_METRIC_PREFIX as P } from '../ops/metrics.js';
import type { EgressStats } from './egress-stats.js';

export function registerEgressMetrics(registry: Registry, stats: EgressStats): void {
  const life = () => stats.lifetime();
  scrapedCounterBy(registry, {
    name: `${P}egress_connects_total`,
    help: 'CONNECTs on the egress listener, by outcome: allowed (a tunnel opened), denied, invalid_certificate, unknown_actor, not_running, not_ip_authority, unavailable, cancelled, method_not_allowed, too_many_tunnels, unreachable, draining, internal, hostname_refused.',
    labelNames: ['outcome'],
    read: () => samplesBy('outcome', life().connects),
  });
  scrapedCounterBy(registry, {
    name: `${P}egress_refusals_total`,
    help: 'CONNECTs the egress listener refused itself, by reason: method, certificate, authority (not IP:port), too_many_tunnels, draining, unreachable (the allowed destination could not be dialled).',
    labelNames: ['reason'],
    read: () => samplesBy('reason', life().refusals),
  });
  scrapedCounterBy(registry, {
    name: `${P}egress_certificate_refusals_total`,
    help: 'CONNECTs refused 403 invalid actor certificate, by what the certificate failed (never sent to ext_proc, never cached).',
    labelNames: ['reason'],
    read: () => samplesBy('reason', life().certificateRefusals),
  });
  scrapedCounterBy(registry, {
    name: `${P}egress_hostname_allowed_total`,
    help: 'Egress tunnels decided on their traffic (only hostname rules could allow the destination) that a rule allowed, by where the name came from: sni (a TLS ClientHello), host (a cleartext HTTP/1.1 request).',
    labelNames: ['by'],
    read: () => samplesBy('by', life().hostnames.allowed),
  });
  scrapedCounterBy(registry, {
    name: `${P}egress_hostname_refusals_total`,
    help: 'Egress tunnels decided on their traffic that were closed after their 200, by reason: no_sni, no_match, unknown_protocol (neither TLS nor HTTP/1.1), malformed, timeout (--egress-sni-timeout-ms), too_large (--egress-sni-max-bytes).',
    labelNames: ['reason'],
    read: () => samplesBy('reason', life().hostnames.refused),
  });
  scrapedGauge(registry, { name: `${P}egress_tunnels_open`, help: 'Egress tunnels open now.', read: () => stats.openTunnels });
  scrapedCounter(registry, { name: `${P}egress_tunnels_total`, help: 'Egress tunnels opened.', read: () => life().tunnels.opened });
  scrapedCounterBy(registry, {
    name: `${P}egress_tunnels_closed_total`,
    help: 'Egress tunnels closed, by reason: actor, destination, idle, lifetime, drain, internal, and their grant ended: revoked-denied, revoked-not-running, revoked-unknown, certificate-expired, revoked-admin, revalidation-failed.',
    labelNames: ['reason'],
    read: () => samplesBy('reason', life().tunnels.closed),
  });
  scrapedGauge(registry, { name: `${P}egress_grants`, help: 'Egress grants held now: certificate and destination pairs with a tunnel open (each re-validated ahead of its lease).', read: () => stats.grantsHeld });
  scrapedCounterBy(registry, {
    name: `${P}egress_revalidations_total`,
    help: 'Re-validations of egress grants through ext_proc, by result: renewed (the lease renewed), revoked (the answer ended the grant and closed its tunnels), failed (no answer that decides: the tunnels stay open until the lease runs out).',
    labelNames: ['result'],
    read: () => samplesBy('result', stats.revalidationsLifetime()),
  });
  scrapedCounterBy(registry, {
    name: `${P}egress_tunnel_bytes_total`,
    help: 'Bytes through egress tunnels, by direction (open tunnels included).',
    labelNames: ['direction'],
    read: (): Sample<'direction'>[] => {
      const b = life().tunnels.bytes;
      return [
        [{ direction: 'from_actor' }, b.fromActor],
        [{ direction: 'to_actor' }, b.toActor],
      ];
    },
  });
}
