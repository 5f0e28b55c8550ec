/**
 * The arms of the comparison, each one way of getting a request from the client to the actor's worker, all
 * measured against the same apiserver-stub and workers in one run:
 * - direct: load straight at the workers (the ceiling: no proxy at all);
 * - floor: bench/floor.ts, a bare node:http + undici dispatch forwarder with a static Host → worker table built from
 *   the stub's placements (what a perfect cache does: the same workers and upstream sockets as C, none of its logic);
 * - floor-1: the same forwarder sending everything to one worker (the least any Node proxy costs on this machine);
 * - floor-ingress: the floor with the header work every ingress does (`--ingress-headers`: forwarding headers, a
 *   request id both ways, forged internal and Connection-named headers removed), so C / floor-ingress is what the
 *   proxy's structure costs beyond the headers it must write anyway;
 * - A: proxy --actor-cache off (one ext_proc stream and one ResumeActor per request: today's path);
 * - B1: proxy --resolver apiserver --actor-cache off (the proxy calls ResumeActor itself, no ext_proc hop);
 * - B2: proxy --resolver apiserver --actor-cache on (cache, misses resolved by the proxy itself);
 * - C: proxy --actor-cache on (the product: cache in front of the unchanged ext_proc slow path).
 * - A-mtls, C-mtls: A and C with mTLS on every hop (proxy → extproc, proxy → workers, extproc → control plane),
 *   against a stub of their own whose workers terminate mTLS (the price of workload identities).
 * - A-extproc-mtls: A with mTLS on the proxy → extproc hop only, against the plaintext stub: with the cache off
 *   every request is a miss, so A-extproc-mtls / A is what that hop's mTLS costs per miss.
 * - A-h2c, C-h1, C-h2c, C-h2, C-tls11: A and C with h2load as the client, over h2c or TLS (bench/h2-arms.ts).
 * - egress-A, egress-C: the egress listener with its verdict cache off (ext_proc, GetActor and the policy for
 *   every CONNECT: the platform's path) and on (the egress scenario only).
 * - heavy-none, heavy-inline, heavy-offload: arm C with no user filter, with a filter whose offloaded part burns
 *   about 2 ms of CPU per JSON POST run inline (`--filter-workers 0`), and the same filter on one worker thread
 *   (`--filter-workers 1`) (the heavy-filter scenario only).
 * - fleet-affinity, fleet-rr, fleet-sni: --replicas proxies (C each, one cache per process) behind HAProxy, by
 *   consistent hash of Host, round robin, or consistent hash of the TLS SNI (the fleet scenario only).
 */
import { fileURLToPath } from 'node:url';
import { H2_ARMS, type H2ArmName, type H2Transport } from './h2-arms.js';
import type { ArmName } from './types.js';
import type { FleetMode } from '../scripts/fleet/haproxy-config.js';

export type ArmKind = 'direct' | 'floor' | 'proxy' | 'fleet' | 'target';

export interface ArmSpec {
  readonly name: ArmName;
  readonly kind: ArmKind;
  readonly description: string;
  /** Proxy flags that define the arm (proxy arms only). */
  readonly proxyFlags: readonly string[];
  /** Whether the arm needs an extproc process. */
  readonly extproc: boolean;
  /** Whether the arm has the actor-binding cache. */
  readonly cache: boolean;
  /** Whether every hop of the arm runs mTLS (then it has a stub of its own whose workers terminate mTLS). */
  readonly mtls: boolean;
  /** Whether the proxy → extproc hop runs mTLS (every mTLS arm, and A-extproc-mtls alone). */
  readonly extprocMtls?: boolean;
  /** Floor arms: route by a Host table over every worker, or everything to one worker. */
  readonly floor?: 'table' | 'one-worker';
  /** Floor arms: with the ingress's header work (`bench/floor.ts --ingress-headers`). */
  readonly ingressHeaders?: boolean;
  /** Present: the load is h2load over this transport (bench/h2-arms.ts); absent: autocannon, HTTP/1.1. */
  readonly transport?: H2Transport;
  /** Fleet arms: how HAProxy spreads the load over the replicas (scripts/fleet/haproxy-config.ts). */
  readonly fleet?: FleetMode;
  /** Egress arms: the proxy runs its egress listener (the run's `EgressFixtures`), where the load goes. */
  readonly egress?: boolean;
}

/** A fleet arm: --replicas proxy processes (cache on, misses through one extproc) behind HAProxy in `mode`. */
function fleetArm(name: ArmName, fleet: FleetMode, description: string): ArmSpec {
  return { name, kind: 'fleet', description, proxyFlags: ['--actor-cache', 'on'], extproc: true, cache: true, mtls: false, fleet };
}

const FLOOR: ArmSpec = { name: 'floor', kind: 'floor', description: 'bare node:http + undici dispatch forwarder, static Host → worker table', proxyFlags: [], extproc: false, cache: false, mtls: false, floor: 'table' };
const A: ArmSpec = { name: 'A', kind: 'proxy', description: 'proxy, cache off: ext_proc + ResumeActor per request', proxyFlags: ['--actor-cache', 'off'], extproc: true, cache: false, mtls: false };
const C: ArmSpec = { name: 'C', kind: 'proxy', description: 'proxy, cache on, misses through ext_proc (the product)', proxyFlags: ['--actor-cache', 'on'], extproc: true, cache: true, mtls: false };

/** The heavy-filter scenario's filter (`filters/heavy-json.ts`), as compiled beside this module. */
export const HEAVY_FILTER_MODULE = fileURLToPath(new URL('./filters/heavy-json.js', import.meta.url));

/**
 * Threads of the heavy-offload arm's pool. One thread is busy 100 × 2 ms = 20 % of the time at the scenario's 100
 * heavy POSTs a second; on two cores that already carry the proxy's event loop, the load generator and the stub,
 * a second thread would only take CPU from them when two heavy calls overlap.
 */
export const HEAVY_OFFLOAD_WORKERS = 1;

/** `arm` with mTLS on every hop, as arm `name`. */
function withMtls(arm: ArmSpec, name: ArmName): ArmSpec {
  return { ...arm, name, description: `${arm.name} with mTLS on every hop`, mtls: true, extprocMtls: true };
}

/** The h2load arms: A or C as they are, with the load over another transport. */
function h2Arms(): Record<H2ArmName, ArmSpec> {
  const base = { A, C };
  const out = {} as Record<H2ArmName, ArmSpec>;
  for (const [name, h] of Object.entries(H2_ARMS) as [H2ArmName, (typeof H2_ARMS)[H2ArmName]][]) {
    out[name] = { ...base[h.base], name, description: `${h.base} over ${h.how} (h2load)`, transport: h.transport };
  }
  return out;
}

export const ARMS: Readonly<Record<Exclude<ArmName, 'target'>, ArmSpec>> = Object.freeze({
  direct: { name: 'direct', kind: 'direct', description: 'straight to the workers, no proxy', proxyFlags: [], extproc: false, cache: false, mtls: false },
  floor: FLOOR,
  'floor-ingress': {
    ...FLOOR,
    name: 'floor-ingress',
    description: 'the floor plus the header work every ingress does (forwarding headers, request id both ways, forged headers removed)',
    ingressHeaders: true,
  },
  'floor-1': { name: 'floor-1', kind: 'floor', description: 'bare node:http + undici dispatch forwarder to one worker', proxyFlags: [], extproc: false, cache: false, mtls: false, floor: 'one-worker' },
  A,
  'A-mtls': withMtls(A, 'A-mtls'),
  'A-extproc-mtls': { ...A, name: 'A-extproc-mtls', description: 'A with mTLS on the proxy → extproc hop only (every request a miss)', extprocMtls: true },
  B1: { name: 'B1', kind: 'proxy', description: 'proxy resolves itself (no ext_proc), cache off', proxyFlags: ['--resolver', 'apiserver', '--actor-cache', 'off'], extproc: false, cache: false, mtls: false },
  B2: { name: 'B2', kind: 'proxy', description: 'proxy resolves itself (no ext_proc), cache on', proxyFlags: ['--resolver', 'apiserver', '--actor-cache', 'on'], extproc: false, cache: true, mtls: false },
  C,
  'C-mtls': withMtls(C, 'C-mtls'),
  ...h2Arms(),
  'fleet-affinity': fleetArm('fleet-affinity', 'affinity', 'replicas behind HAProxy, consistent hash of Host (HTTP)'),
  'fleet-rr': fleetArm('fleet-rr', 'roundrobin', 'replicas behind HAProxy, round robin (no affinity)'),
  'fleet-sni': fleetArm('fleet-sni', 'sni', 'replicas behind HAProxy, TLS passthrough, consistent hash of the SNI; 421 for coalesced requests'),
  'egress-A': { name: 'egress-A', kind: 'proxy', description: 'egress, verdict cache off: ext_proc, GetActor and the policy per CONNECT', proxyFlags: ['--egress-cache', 'off'], extproc: true, cache: false, mtls: false, egress: true },
  'heavy-none': { ...C, name: 'heavy-none', description: 'C with no user filter: the hits\' latency without any heavy filter' },
  'heavy-inline': {
    ...C,
    name: 'heavy-inline',
    description: 'C with a filter burning about 2 ms of CPU per JSON POST on the event loop (--filter-workers 0)',
    proxyFlags: [...C.proxyFlags, '--filter', HEAVY_FILTER_MODULE, '--filter-workers', '0'],
  },
  'heavy-offload': {
    ...C,
    name: 'heavy-offload',
    description: `the same filter, its heavy part on a worker thread (--filter-workers ${HEAVY_OFFLOAD_WORKERS})`,
    proxyFlags: [...C.proxyFlags, '--filter', HEAVY_FILTER_MODULE, '--filter-workers', String(HEAVY_OFFLOAD_WORKERS)],
  },
  'egress-C': { name: 'egress-C', kind: 'proxy', description: 'egress, verdict cache on, misses through ext_proc (the product)', proxyFlags: ['--egress-cache', 'on'], extproc: true, cache: true, mtls: false, egress: true },
});

export const TARGET_ARM: ArmSpec = Object.freeze({
  name: 'target',
  kind: 'target',
  description: 'an already running proxy (--target)',
  proxyFlags: [],
  extproc: false,
  cache: true,
  mtls: false,
});
