/**
 * The heavy-filter scenario's load: an open loop at a fixed rate, `rate` requests a second evenly spaced whatever
 * the answers do, over a pool of `connections` keep-alive connections (requests beyond them wait in the pool, and
 * that wait counts in their latency). Every `heavyEvery`-th request is a POST with a JSON body of about 1 KiB (the
 * filter's heavy part); the others are GETs (cache hits the filter lets through). Each kind's latency is recorded
 * apart, from the moment the request was handed to the pool (as `overload-hits.ts` does: a load generator late on
 * a shared machine is not counted against the proxy; a proxy whose event loop is blocked still is, as its
 * requests wait on the wire or in the pool). When the time is up nothing more is sent and the requests in flight
 * are waited for (up to DRAIN_MS), so each arm's counts end with every request answered: the proxy's filter counts
 * then match the POSTs the load counted, and no call is left to settle as stale after the window.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { LatencyRecorder, type LatencySummary } from './latency.js';
import type { LoadResult } from './load.js';
import { PACED_MAX_IN_FLIGHT } from './overload-hits.js';
import { createRng, uniformSampler } from './sampling.js';

/** The longest the load waits for its requests in flight once the time is up. */
export const DRAIN_MS = 10_000;

export type RequestKind = 'hit' | 'heavy';

export interface MixedLoadParams {
  readonly url: string;
  readonly hosts: readonly string[];
  readonly connections: number;
  readonly seed: number;
  /** Requests per second, both kinds together. */
  readonly rate: number;
  /** Request k is a heavy POST when k % heavyEvery === heavyEvery - 1. */
  readonly heavyEvery: number;
  readonly durationS: number;
  /** Prefix of the requests' `x-request-id`s (unique per load: the stub's workers record the POSTs' ids). */
  readonly idPrefix: string;
}

export interface KindResult {
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly latency: LatencySummary;
}

export interface MixedLoadResult {
  /** Both kinds together, as every other scenario's load reports. */
  readonly all: LoadResult;
  readonly hit: KindResult;
  readonly heavy: KindResult;
}

export function kindOf(k: number, heavyEvery: number): RequestKind {
  return k % heavyEvery === heavyEvery - 1 ? 'heavy' : 'hit';
}

/** A JSON body of about 1 KiB, different for each request (its id), as a chat request to a model would be. */
export function heavyBody(id: string): string {
  const messages = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} of request ${id}: ${'lorem ipsum dolor sit amet '.repeat(3)}` }));
  return JSON.stringify({ id, model: 'small', max_tokens: 256, messages });
}

class Tally {
  readonly recorder = new LatencyRecorder();
  readonly statusCounts: Record<string, number> = {};
  answered = 0;
  non2xx = 0;
  errors = 0;

  answer(status: number, ms: number): void {
    this.recorder.record(ms);
    this.answered++;
    this.statusCounts[String(status)] = (this.statusCounts[String(status)] ?? 0) + 1;
    if (status < 200 || status >= 300) this.non2xx++;
  }

  result(): KindResult {
    return { requests: this.answered, non2xx: this.non2xx, errors: this.errors, statusCounts: { ...this.statusCounts }, latency: this.recorder.summary() };
  }
}

export async function runMixedLoad(params: MixedLoadParams): Promise<MixedLoadResult> {
  const pool = new Pool(params.url, { connections: params.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const pick = uniformSampler(params.hosts.length, createRng(params.seed >>> 0));
  const tallies: Record<RequestKind, Tally> = { hit: new Tally(), heavy: new Tally() };
  const all = new Tally();
  const inFlight = new Set<Promise<void>>();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + params.durationS * 1000;
  const interval = 1000 / params.rate;
  let sent = 0;
  const send = (): void => {
    const k = sent++;
    const start = performance.now();
    const kind = kindOf(k, params.heavyEvery);
    const id = `${params.idPrefix}${k}`;
    const host = params.hosts[pick()] as string;
    const req =
      kind === 'heavy'
        ? pool.request({ path: '/chat', method: 'POST', headers: { host, 'content-type': 'application/json', 'x-request-id': id }, body: heavyBody(id) })
        : pool.request({ path: '/', method: 'GET', headers: { host, 'x-request-id': id } });
    const p: Promise<void> = req
      .then(async (res) => {
        await res.body.dump();
        const ms = performance.now() - start;
        tallies[kind].answer(res.statusCode, ms);
        all.answer(res.statusCode, ms);
      })
      .catch(() => {
        tallies[kind].errors++;
        all.errors++;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  let next = t0;
  while (performance.now() < end) {
    const now = performance.now();
    for (; next <= now && next < end; next += interval) {
      if (inFlight.size < PACED_MAX_IN_FLIGHT) send();
      else {
        // Not sent: counted as an error of the kind that was due.
        const kind = kindOf(sent++, params.heavyEvery);
        tallies[kind].errors++;
        all.errors++;
      }
    }
    await sleep(Math.max(1, next - performance.now()));
  }
  const sendingS = (performance.now() - t0) / 1000;
  await Promise.race([Promise.all([...inFlight]), sleep(DRAIN_MS)]);
  await pool.destroy().catch(() => undefined);
  const cpu = process.cpuUsage(cpu0);
  const total = all.result();
  return {
    all: {
      requests: total.requests,
      durationS: sendingS,
      rps: sendingS > 0 ? total.requests / sendingS : 0,
      non2xx: total.non2xx,
      errors: total.errors,
      timeouts: 0,
      statusCounts: total.statusCounts,
      latency: total.latency,
      loadgenCpuMs: (cpu.user + cpu.system) / 1000,
      loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
    },
    hit: tallies.hit.result(),
    heavy: tallies.heavy.result(),
  };
}
