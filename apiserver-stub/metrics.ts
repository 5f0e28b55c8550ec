/**
 * The stub's Prometheus metrics (`actor_edge_apiserver_stub_…`, its own registry, registered through
 * lib/prom-metrics.ts), read when scraped from
 * the lifetime tallies: RPCs by method and gRPC code, worker deliveries and duplicates, placements, and actors
 * and workers now. Labels are fixed sets (method and code names, actor statuses), never actor names.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { metricPrefix, registerBuildInfo, samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, scrapedGaugeBy, type Sample } from '../lib/prom-metrics.js';
import type { ControlPlane } from './control-plane.js';
import type { RpcCounters } from './rpc-counters.js';
import { workerAlive } from './store.js';
import type { WorkerTlsCounters } from './worker/tls.js';

function rpcSamples(counters: RpcCounters): Sample<'method' | 'code'>[] {
  const out: Sample<'method' | 'code'>[] = [];
  for (const [method, byCode] of Object.entries(counters.lifetimeCounts())) {
    for (const [code, n] of Object.entries(byCode)) out.push([{ method, code }, n]);
  }
  return out;
}

const P = metricPrefix('apiserver-stub');

/** `workerTls`: the in-process workers' mTLS handshakes, when they terminate mTLS. */
export function createStubMetrics(cp: ControlPlane, counters: RpcCounters, workerTls?: WorkerTlsCounters): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerBuildInfo(registry, 'apiserver-stub');
  const store = cp.store;
  scrapedCounterBy(registry, {
    name: `${P}rpc_total`,
    help: 'gRPC calls answered (ateapi.Control and atestub.Workers), by method and status code.',
    labelNames: ['method', 'code'],
    read: () => rpcSamples(counters),
  });
  scrapedCounter(registry, { name: `${P}deliveries_total`, help: 'Requests the workers delivered to an actor (as reported by the workers).', read: () => store.deliveries });
  scrapedCounter(registry, {
    name: `${P}delivery_duplicates_total`,
    help: 'Deliveries whose request id the actor had already received since the last stats reset.',
    read: () => store.duplicates,
  });
  scrapedCounter(registry, { name: `${P}placements_total`, help: 'Actors placed on a worker (cold resumes and moves).', read: () => store.placements });
  scrapedGaugeBy(registry, {
    name: `${P}actors`,
    help: 'Actors now, by status.',
    labelNames: ['status'],
    read: () => {
      const byStatus: Record<string, number> = {};
      for (const a of store.actors.values()) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
      return samplesBy('status', byStatus);
    },
  });
  scrapedGauge(registry, { name: `${P}egress_policies`, help: 'Actors with an egress policy now (the others reach nothing).', read: () => cp.egress.count() });
  scrapedGauge(registry, {
    name: `${P}workers_live`,
    help: 'Workers attached and listening now.',
    read: () => [...store.workers.values()].filter(workerAlive).length,
  });
  if (workerTls !== undefined) {
    scrapedCounterBy(registry, {
      name: `${P}worker_tls_handshakes_total`,
      help: 'mTLS handshakes the in-process workers completed (accepted) or refused (refused_handshake: no valid client certificate; refused_identity: not the accepted client identity).',
      labelNames: ['outcome'],
      read: () => samplesBy('outcome', { accepted: workerTls.accepted, refused_handshake: workerTls.refusedHandshake, refused_identity: workerTls.refusedIdentity }),
    });
  }
  return registry;
}
