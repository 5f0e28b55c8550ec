/** Declarations: the one naming rule, /stats in the tree's order, and one metric made of several declarations. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { declare, declarations, metricName, talliesOf } from './declare.js';
import { exportedMetrics, registerDeclared, statsBlock } from './derive.js';

interface View {
  readonly hits: number;
  readonly reasons: Record<'lru' | 'ttl', number>;
  readonly open: number;
  readonly ok: number;
  readonly failed: number;
}

const TREE = declare<View>()({
  cache: {
    hits: { kind: 'counter', help: 'Hits.', read: (v) => v.hits },
    evictions: { kind: 'counter', label: 'reason', help: 'Evictions.', read: (v) => v.reasons },
    openNow: { kind: 'gauge', help: 'Open.', read: (v) => v.open },
    ratio: { kind: 'stat', help: 'Not exported.', read: (v) => (v.hits > 0 ? 1 : null) },
    refreshes: {
      ok: { kind: 'counter', name: 'cache_refreshes_total', labels: { result: 'ok' }, help: 'Refreshes.', read: (v) => v.ok },
      failed: { kind: 'counter', name: 'cache_refreshes_total', labels: { result: 'failed' }, help: 'Refreshes.', read: (v) => v.failed },
    },
  },
});

const since: View = { hits: 1, reasons: { lru: 0, ttl: 2 }, open: 3, ok: 0, failed: 1 };
const lifetime: View = { hits: 5, reasons: { lru: 4, ttl: 2 }, open: 3, ok: 7, failed: 1 };

test('the Prometheus name derives from the path (snake case, _total for a counter) unless given', () => {
  assert.equal(metricName('p_', ['cache', 'openNow'], { kind: 'gauge', help: '', read: () => 0 }), 'p_cache_open_now');
  assert.equal(metricName('p_', ['upstream', 'connectFailures'], { kind: 'counter', help: '', read: () => 0 }), 'p_upstream_connect_failures_total');
  assert.equal(metricName('p_', ['x'], { kind: 'counter', name: 'older_name_total', help: '', read: () => 0 }), 'p_older_name_total');
  assert.deepEqual(
    declarations(TREE).map((d) => d.path.join('.')),
    ['cache.hits', 'cache.evictions', 'cache.openNow', 'cache.ratio', 'cache.refreshes.ok', 'cache.refreshes.failed'],
  );
});

test('/stats is the tree read from the view, in its order', () => {
  const block = statsBlock(TREE, since);
  assert.equal(JSON.stringify(block), '{"cache":{"hits":1,"evictions":{"lru":0,"ttl":2},"openNow":3,"ratio":1,"refreshes":{"ok":0,"failed":1}}}');
  const typed: { readonly cache: { readonly ratio: number | null; readonly hits: number } } = block;
  assert.equal(typed.cache.ratio, 1);
});

test('/metrics reads the lifetime view; declarations sharing a name are one metric, one label value each', async () => {
  const registry = new Registry();
  registerDeclared(registry, 'p_', TREE, { lifetime: () => lifetime });
  const text = await registry.metrics();
  assert.match(text, /^p_cache_hits_total 5$/m);
  assert.match(text, /^p_cache_evictions_total\{reason="lru"\} 4$/m);
  assert.match(text, /^# TYPE p_cache_open_now gauge$/m);
  assert.match(text, /^p_cache_refreshes_total\{result="ok"\} 7$/m);
  assert.match(text, /^p_cache_refreshes_total\{result="failed"\} 1$/m);
  assert.doesNotMatch(text, /ratio/, 'a stat is not exported');
  assert.deepEqual(exportedMetrics('p_', TREE).map((m) => [m.name, m.paths.length]), [
    ['p_cache_hits_total', 1],
    ['p_cache_evictions_total', 1],
    ['p_cache_open_now', 1],
    ['p_cache_refreshes_total', 2],
  ]);
});

test('declarations that share a name but not their kind, help or labels are refused', () => {
  const bad = declare<View>()({
    a: { kind: 'counter', name: 'same_total', labels: { r: 'x' }, help: 'One.', read: (v) => v.ok },
    b: { kind: 'counter', name: 'same_total', labels: { r: 'y' }, help: 'Another.', read: (v) => v.failed },
  });
  assert.throws(() => exportedMetrics('p_', bad), /p_same_total: declared at a and b/);
  const unlabelled = declare<View>()({
    a: { kind: 'counter', name: 'same_total', help: 'One.', read: (v) => v.ok },
    b: { kind: 'counter', name: 'same_total', help: 'One.', read: (v) => v.failed },
  });
  assert.throws(() => exportedMetrics('p_', unlabelled), /declared at a and b/);
});

test('a number shown otherwise in /stats, in seconds in /metrics; a labelled declaration with fixed labels', async () => {
  interface Delays {
    readonly delayMs: number;
    readonly closed: Record<'client' | 'idle', number>;
  }
  const tree = declare<Delays>()({
    delayMs: { kind: 'gauge', name: 'delay_seconds', divideBy: 1000, help: 'Delay.', read: (v) => v.delayMs, show: (ms: number) => Math.round(ms) },
    upgrade: { closed: { kind: 'counter', name: 'closed_total', labels: { kind: 'upgrade' }, label: 'reason', help: 'Closed.', read: (v) => v.closed } },
    connect: { closed: { kind: 'counter', name: 'closed_total', labels: { kind: 'connect' }, label: 'reason', help: 'Closed.', read: () => ({ client: 0, idle: 9 }) } },
  });
  const view: Delays = { delayMs: 1250.25, closed: { client: 2, idle: 0 } };
  assert.equal(JSON.stringify(statsBlock(tree, view)), '{"delayMs":1250,"upgrade":{"closed":{"client":2,"idle":0}},"connect":{"closed":{"client":0,"idle":9}}}');
  const typed: number = statsBlock(tree, view).delayMs as number;
  assert.equal(typed, 1250);
  const registry = new Registry();
  registerDeclared(registry, 'p_', tree, { lifetime: () => view });
  const text = await registry.metrics();
  assert.match(text, /^p_delay_seconds 1\.25025$/m);
  assert.match(text, /^p_closed_total\{kind="upgrade",reason="client"\} 2$/m);
  assert.match(text, /^p_closed_total\{kind="connect",reason="idle"\} 9$/m);
  assert.deepEqual(exportedMetrics('p_', tree).find((m) => m.name === 'p_closed_total')?.labelNames, ['kind', 'reason']);
});

test('tallies: the declaration is the storage; /stats and /metrics read it from the view\'s tallies', async () => {
  interface Pool {
    readonly tallies: object;
    readonly size: number;
  }
  const tree = declare<Pool>()({
    pool: {
      size: { kind: 'gauge', help: 'Size.', read: (v) => v.size },
      calls: { inline: { kind: 'tally', name: 'pool_inline_total', help: 'Inline.' }, threads: { kind: 'tally', exported: false, help: 'Threads.' } },
      errors: { kind: 'tally', help: 'Errors.' },
    },
  });
  const t = talliesOf(tree);
  assert.deepEqual(t, { pool: { calls: { inline: 0, threads: 0 }, errors: 0 } });
  t.pool.errors++;
  t.pool.calls.inline += 2;
  const block = statsBlock(tree, { tallies: t, size: 4 });
  assert.equal(JSON.stringify(block), '{"pool":{"size":4,"calls":{"inline":2,"threads":0},"errors":1}}');
  const typed: number = block.pool.errors;
  assert.equal(typed, 1);
  const registry = new Registry();
  registerDeclared(registry, 'p_', tree, { lifetime: () => ({ tallies: t, size: 4 }) });
  const text = await registry.metrics();
  assert.match(text, /^p_pool_errors_total 1$/m);
  assert.match(text, /^# TYPE p_pool_inline_total counter$/m);
  assert.match(text, /^p_pool_inline_total 2$/m);
  assert.doesNotMatch(text, /threads/, 'a tally not exported');
});

test('a labelled tally: a record with a zero per key, shown as the record, one sample per key; with fixed labels too', async () => {
  const REASONS = ['stale', 'lru'] as const;
  const OUTCOMES = { kind: 'tally', name: 'pool_outcomes_total', help: 'Outcomes.' } as const;
  const tree = declare<{ readonly tallies: object }>()({
    pool: {
      evictions: { kind: 'tally', label: 'reason', keys: REASONS, help: 'Evictions.' },
      ok: { ...OUTCOMES, labels: { outcome: 'ok' } },
      failed: { ...OUTCOMES, labels: { outcome: 'failed' } },
    },
  });
  const t = talliesOf(tree);
  assert.deepEqual(t, { pool: { evictions: { stale: 0, lru: 0 }, ok: 0, failed: 0 } });
  t.pool.evictions.lru += 3;
  t.pool.failed++;
  const block = statsBlock(tree, { tallies: t });
  assert.equal(JSON.stringify(block), '{"pool":{"evictions":{"stale":0,"lru":3},"ok":0,"failed":1}}');
  const typed: number = block.pool.evictions.lru;
  assert.equal(typed, 3);
  assert.notEqual(block.pool.evictions, t.pool.evictions, '/stats shows a copy, not the storage');
  const registry = new Registry();
  registerDeclared(registry, 'p_', tree, { lifetime: () => ({ tallies: t }) });
  const text = await registry.metrics();
  assert.match(text, /^# TYPE p_pool_evictions_total counter$/m);
  assert.match(text, /^p_pool_evictions_total\{reason="stale"\} 0\np_pool_evictions_total\{reason="lru"\} 3$/m);
  assert.match(text, /^p_pool_outcomes_total\{outcome="ok"\} 0\np_pool_outcomes_total\{outcome="failed"\} 1$/m);
  assert.deepEqual(exportedMetrics('p_', tree).find((m) => m.name === 'p_pool_evictions_total')?.labelNames, ['reason']);
});
