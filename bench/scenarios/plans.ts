/**
 * Request plans shared by the scenarios: which URL each connection talks to and which Hosts it sends.
 * direct pins each connection to one worker and sends only Hosts of actors placed there (a connection cannot
 * follow a random actor across workers); floor-1 sends only Hosts of the actors on its fixed worker; floor (its
 * Host table) and every proxy arm spread uniformly (or Zipf) over all actors.
 */
import type { ActorPlacement } from '../admin.js';
import type { BenchConfig } from '../config.js';
import { actorHost, getRequests, type LoadPlan } from '../load.js';
import { createRng, shuffled, uniformSampler } from '../sampling.js';

/** Requests in each connection's pre-built list (it loops over them). */
export const LIST_LENGTH = 4096;

export function hostsOf(config: BenchConfig, names: readonly string[]): string[] {
  return names.map((n) => actorHost(n, config.atespace, config.actorSuffix));
}

/** Seed for connection `i` of an arm: every connection gets its own sequence, the same in every run. */
export function clientSeed(config: BenchConfig, i: number): number {
  return (config.seed * 7919 + i * 104_729) >>> 0;
}

/** Uniformly random actor per request, spread over all `hosts`. */
export function uniformPlan(config: BenchConfig, url: string, hosts: readonly string[]): LoadPlan {
  return {
    urls: [url],
    connections: config.connections,
    requestsFor: (i) => getRequests(hosts, LIST_LENGTH, uniformSampler(hosts.length, createRng(clientSeed(config, i))), `c${i}-`),
  };
}

/** Groups running actors by worker IP. */
export function byWorker(placements: readonly ActorPlacement[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of placements) {
    if (!p.workerIp || p.status !== 'RUNNING') continue;
    const list = out.get(p.workerIp) ?? [];
    list.push(p.name);
    out.set(p.workerIp, list);
  }
  return out;
}

export interface DirectPlan {
  readonly plan: LoadPlan;
  readonly workers: number;
  readonly actors: number;
}

/** Each connection to one worker (workers chosen in a seeded random order), Hosts of that worker's actors. */
export function directPlan(config: BenchConfig, workerPort: number, placements: readonly ActorPlacement[]): DirectPlan {
  const groups = byWorker(placements);
  if (groups.size === 0) throw new Error('direct: no running actor has a worker');
  const ips = shuffled([...groups.keys()].sort(), createRng(config.seed)).slice(0, config.connections);
  const urls = ips.map((ip) => `http://${ip}:${workerPort}`);
  const hostsByUrl = new Map(urls.map((u, k) => [u, hostsOf(config, groups.get(ips[k] as string) ?? [])]));
  return {
    plan: {
      urls,
      connections: config.connections,
      requestsFor: (i, url) => {
        const hosts = hostsByUrl.get(url) ?? [];
        return getRequests(hosts, LIST_LENGTH, uniformSampler(hosts.length, createRng(clientSeed(config, i))), `c${i}-`);
      },
    },
    workers: ips.length,
    actors: ips.reduce((n, ip) => n + (groups.get(ip)?.length ?? 0), 0),
  };
}

/** The floor's fixed worker: the one hosting the first running actor. */
export function floorWorker(placements: readonly ActorPlacement[]): { ip: string; names: string[] } {
  const groups = byWorker(placements);
  const first = placements.find((p) => p.workerIp && p.status === 'RUNNING');
  if (!first?.workerIp) throw new Error('floor: no running actor has a worker');
  return { ip: first.workerIp, names: groups.get(first.workerIp) ?? [] };
}
