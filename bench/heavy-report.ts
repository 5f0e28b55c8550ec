/**
 * The heavy-filter scenario's arithmetic, targets and table. Per arm: the hits (GETs the filter lets through) and the
 * heavy POSTs apart, and the proxy's `/stats` `filterOffload` counts. The target: with the heavy part offloaded, the
 * hits' p99 at most HEAVY_P99_TARGET × their p99 with no heavy filter at all (`heavy-none`); reported beside it, the
 * same ratio with the heavy part inline, and the CPU each offloaded call cost the proxy beyond running it inline.
 * Speed targets: reported, never failing the run. Pure: the tests feed it literal results.
 */
import { num, obj } from './admin.js';
import type { MixedLoadResult, KindResult } from './heavy-load.js';
import { fmt, fmtInt, table } from './markdown.js';
import type { ArmResult, FilterOffloadCounts, HeavyFilterUsage, HeavyKindUsage, TargetResult } from './types.js';

export const HEAVY_P99_TARGET = 2;

/** The proxy's `/stats` `filterOffload` block as counts (null when it has none). */
export function filterOffloadOf(proxyStats: unknown): FilterOffloadCounts | null {
  const raw: unknown = obj(proxyStats)['filterOffload'];
  if (raw === undefined) return null;
  const f = obj(raw as unknown);
  const calls = obj(f['calls']);
  return { pool: num(calls['pool']), inline: num(calls['inline']), stale: num(f['stale']), errors: num(f['errors']), workers: num(obj(f['workers'])['configured']) };
}

function kindUsage(k: KindResult, seconds: number): HeavyKindUsage {
  return { requests: k.requests, rps: seconds > 0 ? k.requests / seconds : 0, p50Ms: k.latency.p50Ms, p99Ms: k.latency.p99Ms, non2xx: k.non2xx, errors: k.errors };
}

export interface HeavySetup {
  readonly offeredRate: number;
  readonly heavyEvery: number;
  readonly rounds: number;
  readonly workMs: number;
}

export function heavyUsage(load: MixedLoadResult, proxyStats: unknown, setup: HeavySetup): HeavyFilterUsage {
  const s = load.all.durationS;
  const hits = kindUsage(load.hit, s);
  const heavy = kindUsage(load.heavy, s);
  return { hits, heavy, errors: hits.non2xx + hits.errors + heavy.non2xx + heavy.errors, filterOffload: filterOffloadOf(proxyStats), ...setup };
}

const find = (arms: readonly ArmResult[], name: string): ArmResult | undefined => arms.find((a) => a.name === name);

/** The proxy process's CPU ms over the window (its worker threads included). */
function proxyCpuMs(arm: ArmResult): number | undefined {
  return arm.components.find((c) => c.component === 'proxy')?.cpuMs;
}

export const OFFLOAD_TARGET_NAME = `heavy-offload hits p99 <= ${HEAVY_P99_TARGET}x heavy-none's`;
export const INLINE_RATIO_NAME = "heavy-inline hits p99 ÷ heavy-none's";
export const OVERHEAD_NAME = 'offloaded call: proxy CPU beyond the same call inline';

export function heavyTargets(arms: readonly ArmResult[]): TargetResult[] {
  const none = find(arms, 'heavy-none')?.heavyFilter;
  const inline = find(arms, 'heavy-inline');
  const offload = find(arms, 'heavy-offload');
  const out: TargetResult[] = [];
  const base = none !== undefined && none.hits.p99Ms > 0 ? none.hits.p99Ms : undefined;
  const o = offload?.heavyFilter;
  if (base === undefined || o === undefined) {
    out.push({ name: OFFLOAD_TARGET_NAME, status: 'n/a', detail: 'needs arms heavy-none and heavy-offload' });
  } else {
    const r = o.hits.p99Ms / base;
    out.push({
      name: OFFLOAD_TARGET_NAME,
      status: r <= HEAVY_P99_TARGET ? 'met' : 'not-met',
      measured: `heavy-offload hits p99 ${fmt(r, 2)}× heavy-none's`,
      bound: `≤ ${HEAVY_P99_TARGET}×`,
      detail: `hits p99 ${fmt(o.hits.p99Ms, 2)} ms with the heavy part on ${fmtInt(o.filterOffload?.workers)} worker thread(s) vs ${fmt(base, 2)} ms with no heavy filter; p50 ${fmt(o.hits.p50Ms, 2)} vs ${fmt(none!.hits.p50Ms, 2)} ms`,
    });
  }
  const i = inline?.heavyFilter;
  if (base === undefined || i === undefined) {
    out.push({ name: INLINE_RATIO_NAME, status: 'n/a', detail: 'needs arms heavy-none and heavy-inline' });
  } else {
    out.push({
      name: INLINE_RATIO_NAME,
      status: 'reported',
      measured: `heavy-inline hits p99 ${fmt(i.hits.p99Ms / base, 2)}× heavy-none's`,
      detail: `hits p99 ${fmt(i.hits.p99Ms, 2)} ms with the heavy part on the event loop vs ${fmt(base, 2)} ms with no heavy filter; p50 ${fmt(i.hits.p50Ms, 2)} vs ${fmt(none!.hits.p50Ms, 2)} ms`,
    });
  }
  const overhead = perCallOverheadMs(inline, offload);
  out.push(
    overhead === null
      ? { name: OVERHEAD_NAME, status: 'n/a', detail: 'needs arms heavy-inline and heavy-offload with proxy CPU and heavy requests' }
      : {
          name: OVERHEAD_NAME,
          status: 'reported',
          measured: `${fmt(overhead, 3)} ms of proxy CPU per offloaded call beyond inline`,
          detail: `(heavy-offload proxy CPU ÷ its heavy POSTs) − (heavy-inline's); the worker thread's CPU counts in the proxy's; each call's work sized at ${fmt(o?.workMs ?? null, 2)} ms (${fmtInt(o?.rounds)} rounds); noisy on a shared machine`,
        },
  );
  return out;
}

/** Proxy CPU per heavy POST with the heavy part offloaded, less the same inline (ms), or null without the figures. */
export function perCallOverheadMs(inline: ArmResult | undefined, offload: ArmResult | undefined): number | null {
  const perHeavy = (a: ArmResult | undefined): number | null => {
    const cpu = a === undefined ? undefined : proxyCpuMs(a);
    const n = a?.heavyFilter?.heavy.requests ?? 0;
    return cpu === undefined || n <= 0 ? null : cpu / n;
  };
  const i = perHeavy(inline);
  const o = perHeavy(offload);
  return i === null || o === null ? null : o - i;
}

export function heavyTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'hits/s', 'hits p50 / p99 ms', 'heavy/s', 'heavy p50 / p99 ms', 'errors', 'offloaded: pool / inline', 'stale', 'call errors', 'proxy CPU ms/req'],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    arms.map((a) => {
      const h = a.heavyFilter;
      const f = h?.filterOffload;
      return [
        a.name,
        fmtInt(h?.hits.rps),
        h ? `${fmt(h.hits.p50Ms)} / ${fmt(h.hits.p99Ms)}` : '–',
        fmtInt(h?.heavy.rps),
        h ? `${fmt(h.heavy.p50Ms)} / ${fmt(h.heavy.p99Ms)}` : '–',
        fmtInt(h?.errors),
        f ? `${fmtInt(f.pool)} / ${fmtInt(f.inline)}` : '–',
        fmtInt(f?.stale),
        fmtInt(f?.errors),
        fmt(a.components.find((c) => c.component === 'proxy')?.cpuMsPerRequest ?? null, 3),
      ];
    }),
  );
}
