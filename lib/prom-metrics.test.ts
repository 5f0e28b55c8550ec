import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { indexedHistogram } from './prom-metrics.js';

const BUCKETS = [0.001, 0.01, 0.1];
const SERIES = [
  { cache: 'hit', protocol: 'h2' },
  { cache: 'miss', protocol: 'h2' },
  { cache: 'none', protocol: 'http/1.1' },
] as const;
/** Values on, between, below and above the bounds. */
const OBSERVED: readonly (readonly [number, number])[] = [
  [0, 0.0004],
  [0, 0.001],
  [0, 0.002],
  [1, 0.01],
  [1, 0.5],
  [1, 0.05],
  [0, 0],
];

/** The same observations through prom-client's own labelled Histogram, and through `indexedHistogram`. */
function both(): { readonly reference: Registry; readonly indexed: Registry } {
  const reference = new Registry();
  const h = new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['cache', 'protocol'], buckets: BUCKETS, registers: [reference] });
  const indexed = new Registry();
  const ih = indexedHistogram(indexed, { name: 'x_seconds', help: 'h', labelNames: ['cache', 'protocol'], buckets: BUCKETS, series: SERIES });
  for (const [series, value] of OBSERVED) {
    h.observe({ ...SERIES[series] }, value);
    ih.observe(series, value);
  }
  return { reference, indexed };
}

test('indexedHistogram exposes exactly what prom-client\'s labelled Histogram does for the same observations', async () => {
  const { reference, indexed } = both();
  const text = await indexed.metrics();
  assert.equal(text, await reference.metrics());
  assert.match(text, /^x_seconds_bucket\{le="0.001",cache="hit",protocol="h2"\} 3$/m, 'a value on a bound is in that bucket');
  assert.match(text, /^x_seconds_bucket\{le="\+Inf",cache="miss",protocol="h2"\} 3$/m);
  assert.match(text, /^x_seconds_bucket\{le="0.1",cache="miss",protocol="h2"\} 2$/m, 'above the highest bound: only in +Inf');
  assert.doesNotMatch(text, /cache="none"/, 'a label set without observations has no series');
  assert.deepEqual(await indexed.getMetricsAsJSON(), await reference.getMetricsAsJSON());
});

test('indexedHistogram: a scrape reads the counts as they are then; cluster workers\' histograms merge', async () => {
  const { indexed } = both();
  const again = new Registry();
  const h = indexedHistogram(again, { name: 'x_seconds', help: 'h', labelNames: ['cache', 'protocol'], buckets: BUCKETS, series: SERIES });
  h.observe(2, 0.003);
  assert.match(await again.metrics(), /^x_seconds_count\{cache="none",protocol="http\/1.1"\} 1$/m);
  h.observe(2, 0.2);
  assert.match(await again.metrics(), /^x_seconds_count\{cache="none",protocol="http\/1.1"\} 2$/m, 'counts since the previous scrape are not lost');
  const merged = await AggregatorRegistry.aggregate([await indexed.getMetricsAsJSON(), await again.getMetricsAsJSON()]).metrics();
  assert.match(merged, /^x_seconds_count\{cache="hit",protocol="h2"\} 4$/m);
  assert.match(merged, /^x_seconds_bucket\{le="0.01",cache="none",protocol="http\/1.1"\} 1$/m);
  assert.throws(() => indexedHistogram(new Registry(), { name: 'y', help: 'h', labelNames: [], buckets: [0.1, 0.01], series: [{}] }), /buckets must increase/);
});
