/**
 * A label-less Prometheus histogram whose `observe` is a few array operations (prom-client's own Histogram hashes
 * labels on every observation). It speaks prom-client's metric protocol (`get()` returning name, help, type,
 * values), so it registers in a normal Registry, renders in `/metrics`, and merges across cluster workers.
 */
import type { Registry } from 'prom-client';

export class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: Float64Array;
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    bounds: readonly number[],
    registry: Registry,
  ) {
    this.#bounds = Float64Array.from([...bounds].sort((a, b) => a - b));
    this.#counts = new Float64Array(this.#bounds.length);
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(value: number): void {
    const b = this.#bounds;
    for (let i = 0; i < b.length; i++) {
      if (value <= (b[i] as number)) {
        this.#counts[i]!++;
        break;
      }
    }
    this.#sum += value;
    this.#count++;
  }

  reset(): void {
    this.#counts.fill(0);
    this.#sum = 0;
    this.#count = 0;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: { metricName: string; labels: Record<string, string | number>; value: number }[] } {
    const bucket = `${this.name}_bucket`;
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    let acc = 0;
    for (let i = 0; i < this.#bounds.length; i++) {
      acc += this.#counts[i] as number;
      values.push({ metricName: bucket, labels: { le: this.#bounds[i] as number }, value: acc });
    }
    values.push({ metricName: bucket, labels: { le: '+Inf' }, value: this.#count });
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: this.#sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: this.#count });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
