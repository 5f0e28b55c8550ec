/**
 * The one way components register prom-client metrics: each metric is created in the registry it is given
 * (`registers: [registry]`, never prom-client's global one), and counters and gauges are read from the component's
 * plain tallies when scraped (`collect`), so the request path pays nothing for them. Labels come from fixed sets
 * (status codes, outcomes, gRPC code names, reasons), never from names a client chose.
 */
import { Counter, Gauge, Histogram, type Aggregator, type Registry } from 'prom-client';

export interface MetricSpec {
  readonly name: string;
  readonly help: string;
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
  return { name: spec.name, help: spec.help, labelNames, registers: [registry] };
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

/**
 * A gauge whose value is `read()` at scrape time. `aggregator`: how the cluster primary merges it over worker
 * processes (prom-client's; default `sum`).
 */
export function scrapedGauge(registry: Registry, spec: MetricSpec & { read(): number; readonly aggregator?: Aggregator }): void {
  new Gauge({ ...base(registry, spec), ...(spec.aggregator === undefined ? {} : { aggregator: spec.aggregator }), collect() { this.set(spec.read()); } });
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
