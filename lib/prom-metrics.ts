/**
 * The one way components register prom-client metrics: each metric is created in the registry it is given
 * (`registers: [registry]`, never prom-client's global one), and counters and gauges are read from the component's
 * plain tallies when scraped (`collect`), so the request path pays nothing for them. Labels come from fixed sets
 * (status codes, outcomes, gRPC code names, reasons), never from names a client chose.
 *
 * Names follow one scheme across components (docs/operating.md "Metric names"):
 * `actor_edge_<component>_[<subsystem>_]<what>[_<unit>][_total]`, the component as the CLI names it with `_`
 * for `-` (`proxy`, `extproc`, `apiserver_stub`, `floor`), units in the plural base unit (`_seconds`, `_bytes`),
 * counters ending in `_total`, gauges of things open or waiting now ending in `_active`, and
 * `actor_edge_<component>_build_info` (a gauge of 1 labelled with the version). prom-client's default process
 * metrics (`process_*`, `nodejs_*`) keep their standard names.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { BUILD_INFO } from './build-info.js';

/** How the proxy's cluster primary merges one metric over its workers (prom-client's aggregators). */
export type Aggregator = 'sum' | 'first' | 'min' | 'max' | 'average' | 'omit';

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
  /** Default `sum`. */
  readonly aggregator?: Aggregator;
}

/** `actor_edge_<component>_` for a component named as on the command line (`apiserver-stub` → `apiserver_stub`). */
export function metricPrefix(component: string): string {
  return `actor_edge_${component.replace(/-/g, '_')}_`;
}

/** One labelled value: the label values, then the value. */
export type Sample<L extends string> = readonly [Readonly<Record<L, string>>, number];

export interface LabelledSpec<L extends string> extends MetricSpec {
  readonly labelNames: readonly L[];
  read(): Iterable<Sample<L>>;
}

/** `{"OK": 3, "ABORTED": 1}` as samples of one label: `[[{code: "OK"}, 3], [{code: "ABORTED"}, 1]]`. */
export function samplesBy<L extends string>(label: L, counts: Readonly<Record<string, number>>): Sample<L>[] {
  return Object.entries(counts).map(([value, n]) => [{ [label]: value } as Record<L, string>, n]);
}

function base<L extends string>(registry: Registry, spec: MetricSpec, labelNames: readonly L[] = []) {
  return { name: spec.name, help: spec.help, labelNames, registers: [registry], ...(spec.aggregator === undefined ? {} : { aggregator: spec.aggregator }) };
}

/** A counter whose value is `read()` at scrape time (a lifetime tally: it must never go down). */
export function scrapedCounter(registry: Registry, spec: MetricSpec & { read(): number }): void {
  new Counter({
    ...base(registry, spec),
    collect() {
      this.reset();
      this.inc(spec.read());
    },
  });
}

/** A labelled counter whose samples are `read()` at scrape time. */
export function scrapedCounterBy<L extends string>(registry: Registry, spec: LabelledSpec<L>): void {
  new Counter<L>({
    ...base(registry, spec, spec.labelNames),
    collect() {
      this.reset();
      for (const [labels, n] of spec.read()) this.inc(labels as Partial<Record<L, string>>, n);
    },
  });
}

/** A gauge whose value is `read()` at scrape time. */
export function scrapedGauge(registry: Registry, spec: MetricSpec & { read(): number }): void {
  new Gauge({ ...base(registry, spec), collect() { this.set(spec.read()); } });
}

/** A labelled gauge whose samples are `read()` at scrape time (label sets that disappear are dropped). */
export function scrapedGaugeBy<L extends string>(registry: Registry, spec: LabelledSpec<L>): void {
  const read = (): Iterable<Sample<L>> => spec.read();
  new Gauge<L>({
    ...base(registry, spec, spec.labelNames),
    collect() {
      this.reset();
      for (const [labels, n] of read()) this.set(labels as Partial<Record<L, string>>, n);
    },
  });
}

/** A histogram observed as things happen (prom-client's own; label-less when `labelNames` is empty). */
export function histogram<L extends string = never>(
  registry: Registry,
  spec: MetricSpec & { readonly buckets: readonly number[]; readonly labelNames?: readonly L[] },
): Histogram<L> {
  return new Histogram<L>({ ...base(registry, spec, spec.labelNames), buckets: [...spec.buckets] });
}

export interface IndexedHistogramSpec<L extends string> extends MetricSpec {
  readonly buckets: readonly number[];
  readonly labelNames: readonly L[];
  /** Every label combination the histogram has, fixed up front: `observe` names one by its index here. */
  readonly series: readonly Readonly<Record<L, string>>[];
}

/** A histogram whose label sets are known up front, observed by index (`indexedHistogram`). */
export interface IndexedHistogram {
  /** One observation of `value` in the label set `spec.series[series]`. */
  observe(series: number, value: number): void;
  /**
   * The live per-bucket counts of label set `series` (lifetime, not cumulative: one slot per bound, then one above
   * the highest). Read only: for samplers off the request path (the admin's `/stats/history`).
   */
  counts(series: number): Readonly<Float64Array>;
}

/** prom-client's state of one label set of a Histogram (per-bucket counts, not cumulative), which `observe` keeps. */
interface HistogramSeriesState {
  readonly labels: Readonly<Record<string, string>>;
  readonly bucketValues: Record<number, number>;
  readonly sum: number;
  readonly count: number;
}

/**
 * A labelled histogram for a hot path. prom-client's `observe(labels, v)` hashes the labels on every call; here
 * every label set is fixed up front and has its own bucket counters (a Float64Array), so an observation is a
 * bucket search and two additions. A prom-client Histogram carries the metric (name, help, buckets, exposition,
 * the cluster merge); its `collect` hands it the counts when scraped. A label set appears once it has an
 * observation, as with prom-client's own `observe`.
 */
export function indexedHistogram<L extends string>(registry: Registry, spec: IndexedHistogramSpec<L>): IndexedHistogram {
  const bounds = Float64Array.from(spec.buckets);
  const last = bounds.length;
  for (let i = 1; i < last; i++) if (!((bounds[i] as number) > (bounds[i - 1] as number))) throw new Error(`${spec.name}: buckets must increase`);
  // Per label set: the count of each bucket (observations above the previous bound, up to its own), then the
  // count above the highest bound.
  const counts = spec.series.map(() => new Float64Array(last + 1));
  const sums = new Float64Array(spec.series.length);
  const metric = new Histogram<L>({
    ...base(registry, spec, spec.labelNames),
    buckets: [...spec.buckets],
    collect() {
      const state: Record<string, HistogramSeriesState> = {};
      for (let s = 0; s < counts.length; s++) {
        const c = counts[s] as Float64Array;
        let count = 0;
        const bucketValues: Record<number, number> = {};
        for (let i = 0; i <= last; i++) {
          count += c[i] as number;
          if (i < last) bucketValues[bounds[i] as number] = c[i] as number;
        }
        if (count > 0) state[String(s)] = { labels: spec.series[s] as Readonly<Record<string, string>>, bucketValues, sum: sums[s] as number, count };
      }
      (this as unknown as { hashMap: Record<string, HistogramSeriesState> }).hashMap = state;
    },
  });
  if (typeof (metric as unknown as { hashMap?: unknown }).hashMap !== 'object') throw new Error('prom-client Histogram keeps no hashMap: indexedHistogram needs updating');
  return {
    observe(series: number, value: number): void {
      const c = counts[series] as Float64Array;
      let i = 0;
      while (i < last && value > (bounds[i] as number)) i++;
      c[i]!++;
      sums[series]! += value;
    },
    counts: (series) => counts[series] as Float64Array,
  };
}

/** `actor_edge_<component>_build_info{version, node_version} 1` (merged over cluster workers as one). */
export function registerBuildInfo(registry: Registry, component: string): void {
  const g = new Gauge<'version' | 'node_version'>({
    ...base(registry, { name: `${metricPrefix(component)}build_info`, help: 'Always 1; the labels say which build runs.', aggregator: 'first' }, ['version', 'node_version']),
  });
  g.set({ version: BUILD_INFO.version, node_version: BUILD_INFO.nodeVersion }, 1);
}
