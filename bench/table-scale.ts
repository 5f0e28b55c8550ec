/**
 * The binding table's scale, in one process: memory per cached binding (RSS and V8 heap of a warmed process with
 * 0 and with `--entries` bindings, keys and the worker index included) and the CPU of one hit lookup with a small table (`--small`) against a full
 * one, keys drawn uniformly from the whole table so the large one cannot stay in the CPU caches.
 *
 * `node --expose-gc dist/bench/table-scale.js [--entries 100000] [--small 2000] [--lookups 1000000]`
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BindingCache } from '../proxy/stages/actor-cache/binding-cache.js';
import { createRng } from './sampling.js';

export interface ScaleReport {
  readonly entries: number;
  readonly rssBytesPerBinding: number;
  readonly heapBytesPerBinding: number;
  readonly lookups: readonly { readonly entries: number; readonly nsPerHit: number }[];
}

const WORKERS = 64;

function keyOf(i: number): string {
  return `demo/actor-${String(i).padStart(6, '0')}`;
}

function fill(cache: BindingCache, n: number): void {
  for (let i = 0; i < n; i++) cache.learn(keyOf(i), `127.0.1.${(i % WORKERS) + 1}:8443`);
}

function settle(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

function newCache(entries: number): BindingCache {
  return new BindingCache({ ttlMs: 3_600_000, maxEntries: entries, refreshAheadFraction: 0.2 });
}

/** CPU nanoseconds per hit over `lookups` uniformly random keys of a table of `entries` (after a warm-up pass). */
export function hitCost(entries: number, lookups: number, seed = 1): number {
  const cache = newCache(entries);
  fill(cache, entries);
  const rng = createRng(seed);
  const keys = Array.from({ length: Math.min(lookups, 1 << 16) }, () => keyOf(Math.floor(rng() * entries)));
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      if (cache.lookup(keys[i & (keys.length - 1)] as string).kind !== 'hit') throw new Error('a lookup missed');
    }
  };
  run(Math.min(lookups, 100_000));
  const before = process.cpuUsage();
  run(lookups);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / lookups;
}

/**
 * A warmed process: the young generation has grown to its working size (as under load) before the baseline, so
 * the difference is the table, not the allocator's slack. (Its own frame, so nothing of it stays reachable.)
 */
function warm(entries: number): void {
  fill(newCache(entries), entries);
}

export function measureScale(entries: number, small: number, lookups: number): ScaleReport {
  warm(entries);
  settle();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const cache = newCache(entries);
  fill(cache, entries);
  settle();
  const rss1 = process.memoryUsage().rss;
  const heap1 = process.memoryUsage().heapUsed;
  if (cache.size !== entries) throw new Error(`the table holds ${cache.size} bindings, wanted ${entries}`);
  const report: ScaleReport = {
    entries,
    rssBytesPerBinding: (rss1 - rss0) / entries,
    heapBytesPerBinding: (heap1 - heap0) / entries,
    lookups: [small, entries].map((n) => ({ entries: n, nsPerHit: hitCost(n, lookups) })),
  };
  return report;
}

export function renderScale(r: ScaleReport): string {
  const [a, b] = r.lookups;
  return [
    `| bindings | RSS bytes per binding | V8 heap bytes per binding |`,
    `|---:|---:|---:|`,
    `| ${r.entries.toLocaleString('en-US')} | ${r.rssBytesPerBinding.toFixed(0)} | ${r.heapBytesPerBinding.toFixed(0)} |`,
    '',
    `| table size | CPU ns per hit lookup |`,
    `|---:|---:|`,
    ...r.lookups.map((l) => `| ${l.entries.toLocaleString('en-US')} | ${l.nsPerHit.toFixed(0)} |`),
    '',
    a && b ? `Hit cost at ${b.entries.toLocaleString('en-US')} ÷ at ${a.entries.toLocaleString('en-US')}: ${(b.nsPerHit / a.nsPerHit).toFixed(2)}x.` : '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { entries: { type: 'string', default: '100000' }, small: { type: 'string', default: '2000' }, lookups: { type: 'string', default: '1000000' } },
  });
  const r = measureScale(Number(values.entries), Number(values.small), Number(values.lookups));
  process.stdout.write(renderScale(r) + '\n');
}
