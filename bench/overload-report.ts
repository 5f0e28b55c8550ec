/**
 * The overload scenario's arithmetic and its part of the report, pure (the unit tests feed it recorded numbers):
 * hits counted in a window from the hit load's time buckets, the proxy's counters about shedding and refusing
 * picked from its /stats and /metrics whatever they are named, the targets (peak RSS, hit throughput against the
 * no-flood phase, no restart) and the per-phase table.
 */
import { fmt, fmtInt, mb, pct, table } from './markdown.js';
import type { ArmResult, FdLimit, FloodKind, FloodOutcome, OverloadPhase, TargetResult } from './types.js';

/** Peak RSS every phase must stay under, with the proxy's defaults: 256 MB (MiB, as every MB in the reports). */
export const RSS_TARGET_BYTES = 256 * 1024 * 1024;
/** Share of the no-flood phase's hit throughput every flood phase must keep. */
export const HIT_RATIO_TARGET = 0.8;

/** The name of the first phase, the reference for the hit ratios. */
export const NO_FLOOD = 'no flood';
/** Below this share of its offered rate, the no-flood phase says the machine was too busy for the ratios to mean much. */
export const OFFERED_RATE_SHARE = 0.9;

// ---- sizes --------------------------------------------------------------------------------------------------

/** File descriptors left for everything but the floods' connections in each process (listeners, pools, files). */
export const FD_RESERVE = 1024;

/**
 * The floods' sizes the open-file limits allow: idle and slowloris connections each take one descriptor in the
 * bench and one in the proxy; an upload or a cold request takes one in the bench, two in the proxy (the client's
 * connection and one to the worker) and one in the stub (the worker's side). A size that does not fit is cut to
 * what does, with a note.
 */
export function sizeFloods(
  requested: Readonly<Record<FloodKind, number>>,
  limits: { readonly bench: FdLimit | null; readonly proxy: FdLimit | null; readonly stub: FdLimit | null },
): { sizes: Record<FloodKind, number>; notes: string[] } {
  const room = (l: FdLimit | null, per: number): number => (l === null ? Infinity : Math.max(0, Math.floor((l.soft - FD_RESERVE) / per)));
  const held = Math.min(room(limits.bench, 1), room(limits.proxy, 1));
  const forwarded = Math.min(room(limits.bench, 1), room(limits.proxy, 2), room(limits.stub, 1));
  const allowed: Record<FloodKind, number> = { idle: held, slowloris: held, uploads: forwarded, cold: forwarded };
  const sizes = { ...requested };
  const notes: string[] = [];
  for (const kind of ['idle', 'slowloris', 'uploads', 'cold'] as const) {
    if (requested[kind] <= allowed[kind]) continue;
    sizes[kind] = allowed[kind];
    notes.push(
      `${kind}: sized down from ${fmtInt(requested[kind])} to ${fmtInt(allowed[kind])} by the open-file limits (soft: bench ${limits.bench?.soft ?? '?'}, proxy ${limits.proxy?.soft ?? '?'}, stub ${limits.stub?.soft ?? '?'}; ${FD_RESERVE} kept for everything else); raise them with \`ulimit -n\` before the run`,
    );
  }
  return { sizes, notes };
}

// ---- the hit load's buckets ---------------------------------------------------------------------------------

/** The hit load's answers by the time they arrived: bucket i covers [startMs + i × bucketMs, + bucketMs). */
export interface HitBuckets {
  /** Epoch milliseconds (Date.now()) of bucket 0's start. */
  readonly startMs: number;
  readonly bucketMs: number;
  readonly ok: readonly number[];
  readonly non2xx: readonly number[];
  readonly errors: readonly number[];
}

export interface WindowHits {
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly seconds: number;
  readonly rps: number;
}

/**
 * The answers that arrived in [fromMs, toMs] (epoch ms), a bucket cut by an edge counted in proportion to the
 * part of it inside (answers are spread evenly enough over 50 ms for that), rounded to whole answers.
 */
export function hitsInWindow(b: HitBuckets, fromMs: number, toMs: number): WindowHits {
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const n = Math.max(b.ok.length, b.non2xx.length, b.errors.length);
  for (let i = 0; i < n; i++) {
    const start = b.startMs + i * b.bucketMs;
    const inside = Math.max(0, Math.min(toMs, start + b.bucketMs) - Math.max(fromMs, start)) / b.bucketMs;
    if (inside <= 0) continue;
    ok += (b.ok[i] ?? 0) * inside;
    non2xx += (b.non2xx[i] ?? 0) * inside;
    errors += (b.errors[i] ?? 0) * inside;
  }
  const seconds = Math.max(0, toMs - fromMs) / 1000;
  const okRounded = Math.round(ok);
  return { ok: okRounded, non2xx: Math.round(non2xx), errors: Math.round(errors), seconds, rps: seconds > 0 ? okRounded / seconds : 0 };
}

/** rps ÷ the no-flood rps; null when either is missing or the reference answered nothing. */
export function hitRatio(rps: number | null | undefined, baselineRps: number | null | undefined): number | null {
  if (rps === null || rps === undefined || baselineRps === null || baselineRps === undefined || !(baselineRps > 0)) return null;
  return rps / baselineRps;
}

// ---- the proxy's counters -----------------------------------------------------------------------------------

/** Counter names (a /stats path or a /metrics series) that concern shedding, refusing, budgets or queues. */
export const OVERLOAD_WORDS = /shed|refus|reject|overload|budget|queue/i;

/**
 * Where the overload manager counts what it shed and the connections it refused: its /stats block, and the same
 * counts in /metrics (by reason). A proxy without the manager has neither.
 */
export const SHED_STATS = 'overload.shed.';
export const SHED_METRIC = 'actor_edge_proxy_shed_total';
export const REFUSED_STATS = 'overload.connections.refused.';
export const REFUSED_METRIC = 'actor_edge_proxy_connections_refused_total';

/** Every numeric leaf of a JSON document by its dotted path (`{"a":{"b":1}}` → `{"a.b": 1}`); arrays are skipped. */
export function flattenNumbers(doc: unknown, prefix = ''): Record<string, number> {
  const out: Record<string, number> = {};
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return out;
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (typeof v === 'number' && Number.isFinite(v)) out[path] = v;
    else if (v !== null && typeof v === 'object') Object.assign(out, flattenNumbers(v, path));
  }
  return out;
}

/** A Prometheus text scrape as series (the name with its labels, as exposed) → value; comments skipped. */
export function parseMetrics(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    // The value follows the series (whose labels may hold spaces inside quotes): the first field after it (a
    // timestamp may follow).
    const close = line.lastIndexOf('}');
    const rest = close === -1 ? line : line.slice(close + 1);
    const fields = rest.trim().split(/\s+/);
    const series = close === -1 ? (fields.shift() as string) : line.slice(0, close + 1);
    const value = Number(fields[0]);
    if (series !== '' && fields.length > 0 && Number.isFinite(value)) out[series] = value;
  }
  return out;
}

/**
 * The proxy's counters about overload, from one /stats document and one /metrics scrape: `stats:<path>` and
 * `metrics:<series>` → value, for every name that matches OVERLOAD_WORDS.
 */
export function overloadCounters(stats: unknown, metricsText: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [path, v] of Object.entries(flattenNumbers(stats))) if (OVERLOAD_WORDS.test(path)) out[`stats:${path}`] = v;
  if (metricsText !== null) {
    for (const [series, v] of Object.entries(parseMetrics(metricsText))) {
      if (series.startsWith('actor_edge_proxy_') && OVERLOAD_WORDS.test(series)) out[`metrics:${series}`] = v;
    }
  }
  return out;
}

/** Each counter's change from `before` to `after` (a counter new in `after` counts from 0). */
export function counterChange(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}

/** The changes that are not 0 (a phase's `proxyCounters`; a gauge among them shows its change too). */
export function changed(change: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(change).filter(([, v]) => v !== 0));
}

/**
 * The phase's shed and refused counts from the counters' change: the sum over `overload.shed.*` (refused:
 * `overload.connections.refused.*`) in /stats, else over the series of `actor_edge_proxy_shed_total`
 * (`actor_edge_proxy_connections_refused_total`) in /metrics; null when the proxy has neither (no overload manager).
 */
export function shedAndRefused(change: Readonly<Record<string, number>>): { shed: number | null; refused: number | null } {
  const pick = (statsPrefix: string, metric: string): number | null => {
    const sum = (keys: string[]): number => keys.reduce((n, k) => n + (change[k] ?? 0), 0);
    const inStats = Object.keys(change).filter((k) => k.startsWith(`stats:${statsPrefix}`));
    if (inStats.length > 0) return sum(inStats);
    const inMetrics = Object.keys(change).filter((k) => k === `metrics:${metric}` || k.startsWith(`metrics:${metric}{`));
    return inMetrics.length > 0 ? sum(inMetrics) : null;
  };
  return { shed: pick(SHED_STATS, SHED_METRIC), refused: pick(REFUSED_STATS, REFUSED_METRIC) };
}

// ---- targets ------------------------------------------------------------------------------------------------

function processText(p: OverloadPhase): string {
  const pid = p.process.pid ?? '?';
  if (!p.process.alive) return `pid ${pid} gone`;
  if (p.process.restarted) return `restarted (pid ${pid} → ${p.process.pidAfter ?? '?'})`;
  return p.process.pidAfter === null ? `pid ${pid} alive (admin did not answer)` : `pid ${pid} alive, same pid after`;
}

/** The overload scenario's targets, per phase: peak RSS, hits against the no-flood phase, no restart or death. */
export function overloadTargets(arms: readonly ArmResult[]): TargetResult[] {
  return arms.flatMap((arm): TargetResult[] => {
    const o = arm.overload;
    if (!o) return [];
    const base = o.phases.find((p) => p.name === NO_FLOOD && p.skipped === undefined);
    const limit = `${mb(o.rssTargetBytes)} MB`;
    return o.phases.flatMap((p): TargetResult[] => {
      const prefix = `${arm.name}: ${p.name}`;
      if (p.skipped !== undefined) {
        return [{ name: `${prefix}: ran`, status: 'not-met', detail: p.skipped, correctness: true }];
      }
      const out: TargetResult[] = [];
      if (p.flood === null && o.hitRate > 0) {
        const share = p.hits.rps / o.hitRate;
        out.push({
          name: `${prefix}: the hit load's offered rate`,
          status: 'reported',
          detail: `${fmtInt(p.hits.rps)} of ${fmtInt(o.hitRate)} hits/s offered (${pct(share)})${share < OFFERED_RATE_SHARE ? `: below ${pct(OFFERED_RATE_SHARE)}, the machine was too busy without any flood for the ratios below to say much about the proxy` : ''}`,
        });
      }
      const peak = p.rss.peakBytes;
      out.push(
        peak === null
          ? { name: `${prefix}: proxy peak RSS < ${limit}`, status: 'n/a', detail: 'no RSS sample' }
          : {
              name: `${prefix}: proxy peak RSS < ${limit}`,
              status: peak < o.rssTargetBytes ? 'met' : 'not-met',
              detail: `peak ${mb(peak)} MB (${p.rss.hwmReset ? 'VmHWM reset at the phase\'s start' : `largest of ${p.rss.samples} VmRSS samples`}) against ${limit}; ${mb(p.rss.startBytes ?? 0)} MB at the start, ${p.rss.afterBytes === null ? '–' : mb(p.rss.afterBytes)} MB after the flood`,
            },
      );
      if (p.flood !== null) {
        const ratio = p.hits.ratio;
        out.push(
          ratio === null
            ? { name: `${prefix}: hits >= ${pct(o.hitRatioTarget)} of the no-flood rate`, status: 'n/a', detail: base ? 'the no-flood phase answered nothing' : 'no no-flood phase' }
            : {
                name: `${prefix}: hits >= ${pct(o.hitRatioTarget)} of the no-flood rate`,
                status: ratio >= o.hitRatioTarget ? 'met' : 'not-met',
                detail: `${fmtInt(p.hits.rps)} hits/s over ${fmt(p.windowS, 1)} s = ${pct(ratio)} of ${fmtInt(base?.hits.rps)} hits/s with no flood; ${fmtInt(p.hits.non2xx)} non-2xx, ${fmtInt(p.hits.errors)} errors`,
              },
        );
      }
      out.push({
        name: `${prefix}: the proxy neither restarted nor died`,
        status: p.process.alive && !p.process.restarted ? 'met' : 'not-met',
        detail: processText(p),
        correctness: true,
      });
      return out;
    });
  });
}

// ---- the table ----------------------------------------------------------------------------------------------

/** `code n` pairs, e.g. `ECONNRESET 3 · timeout 5` (– when empty). */
export function countsText(counts: Readonly<Record<string, number>> | undefined): string {
  const parts = Object.entries(counts ?? {}).filter(([, n]) => n !== 0);
  return parts.length ? parts.map(([k, n]) => `${k} ${fmtInt(n)}`).join(' · ') : '–';
}

function answersText(f: FloodOutcome): string {
  const parts = Object.entries(f.statusCounts).map(([code, n]) => `${code}×${n}`);
  return parts.length ? parts.join(' ') : '–';
}

const FLOOD_NAMES: Readonly<Record<FloodOutcome['kind'], string>> = { idle: 'idle', slowloris: 'slowloris', uploads: 'uploads', cold: 'cold actors' };

export function floodText(f: FloodOutcome | null): string {
  if (f === null) return '–';
  const what = `${fmtInt(f.planned)} ${FLOOD_NAMES[f.kind]}`;
  return f.kind === 'uploads' ? `${what} (${fmtInt(f.requests)} POSTs)` : `${what} (${fmtInt(f.connected)} connected)`;
}

function nullableInt(n: number | null): string {
  return n === null ? 'null' : fmtInt(n);
}

export function overloadTable(arms: readonly ArmResult[]): string {
  return table(
    ['arm', 'phase', 'flood', 'window s', 'hits/s', 'of no flood', 'hits/s just before', 'hit p50 / p99 ms', 'proxy peak RSS MB', 'RSS after MB', 'shed', 'refused', 'flood answers', 'Retry-After', 'flood errors', 'connect errors', 'closed by proxy', 'open / in flight at end', 'proxy process'],
    ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l', 'l', 'r', 'r', 'l'],
    arms.flatMap((a) =>
      (a.overload?.phases ?? []).map((p) =>
        p.skipped !== undefined
          ? [a.name, p.name, `did not run: ${p.skipped}`, '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–', '–']
          : [
              a.name,
              p.name,
              floodText(p.flood),
              fmt(p.windowS, 1),
              fmtInt(p.hits.rps),
              p.hits.ratio === null ? '–' : pct(p.hits.ratio),
              fmtInt(p.hits.beforeRps),
              p.hits.latency === undefined ? '–' : `${fmt(p.hits.latency.p50Ms, 1)} / ${fmt(p.hits.latency.p99Ms, 1)}`,
              p.rss.peakBytes === null ? '–' : mb(p.rss.peakBytes),
              p.rss.afterBytes === null ? '–' : mb(p.rss.afterBytes),
              nullableInt(p.shed),
              nullableInt(p.refused),
              p.flood ? answersText(p.flood) : '–',
              p.flood ? fmtInt(p.flood.retryAfter) : '–',
              p.flood ? countsText(p.flood.errors) : '–',
              p.flood ? countsText(p.flood.connectErrors) : '–',
              p.flood ? fmtInt(p.flood.closedByProxy) : '–',
              p.flood ? `${fmtInt(p.flood.openAtEnd)} / ${fmtInt(p.flood.inFlightAtEnd)}` : '–',
              processText(p),
            ],
      ),
    ),
  );
}
