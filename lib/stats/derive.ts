/**
 * `/stats` and `/metrics` from one tree of declarations (`declare.ts`): `statsBlock` builds the JSON block from a
 * view of the component's state, `registerDeclared` registers every exported declaration with prom-client (read
 * from the lifetime view when scraped, through lib/prom-metrics.ts), and `exportedMetrics` lists what it registers,
 * each metric with the `/stats` paths it is read from.
 */
import type { Registry } from 'prom-client';
import { samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, scrapedGaugeBy, type Sample } from '../prom-metrics.js';
import { declarations, isDeclaration, isExported, metricName, type DeclarationTree, type LabelledDeclaration, type StatsOf, type ValueDeclaration } from './declare.js';

/** Where the declarations read from: the counts since the last reset (`/stats`), or since the process started (`/metrics`). */
export interface StatsSource<V> {
  sinceReset(): V;
  lifetime(): V;
}

/** The `/stats` block of `tree`, every declaration read from `view`, in the tree's order. */
export function statsBlock<V, T extends DeclarationTree<V>>(tree: T, view: V): StatsOf<T> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(tree)) {
    if (!isDeclaration(node)) out[key] = statsBlock(node, view);
    else if (node.kind !== 'stat' && node.show !== undefined) out[key] = (node.show as (value: unknown) => unknown)(node.read(view));
    else out[key] = node.read(view);
  }
  return out as StatsOf<T>;
}

type Exported<V> = ValueDeclaration<V> | LabelledDeclaration<V>;

/** One metric and the declarations it is made of (one, or several that each give one label value). */
export interface DeclaredMetric<V> {
  readonly name: string;
  readonly kind: 'counter' | 'gauge';
  readonly help: string;
  readonly labelNames: readonly string[];
  /** The `/stats` paths it is read from (`cache.evictions`). */
  readonly paths: readonly string[];
  readonly parts: readonly Exported<V>[];
}

function labelNamesOf<V>(d: Exported<V>): string[] {
  const fixed = Object.keys(d.labels ?? {});
  return 'label' in d ? [...fixed, d.label] : fixed;
}

/** One declaration's samples: its fixed labels, and its label's keys for a labelled one; in the metric's unit. */
function samplesOf<V>(d: Exported<V>, view: V): Sample<string>[] {
  const fixed = d.labels ?? {};
  const divideBy = d.divideBy ?? 1;
  if (!('label' in d)) return [[fixed, d.read(view) / divideBy]];
  return samplesBy(d.label, d.read(view)).map(([labels, n]): Sample<string> => [{ ...fixed, ...labels }, n / divideBy]);
}

/** The metrics `tree` exports under `prefix`, in the tree's order; throws when declarations sharing a name disagree. */
export function exportedMetrics<V>(prefix: string, tree: DeclarationTree<V>): DeclaredMetric<V>[] {
  const byName = new Map<string, { name: string; kind: 'counter' | 'gauge'; help: string; labelNames: string[]; paths: string[]; parts: Exported<V>[] }>();
  for (const { path, declaration } of declarations(tree)) {
    if (!isExported(declaration)) continue;
    const name = metricName(prefix, path, declaration);
    const labelNames = labelNamesOf(declaration);
    const seen = byName.get(name);
    if (seen === undefined) {
      byName.set(name, { name, kind: declaration.kind, help: declaration.help, labelNames, paths: [path.join('.')], parts: [declaration] });
      continue;
    }
    const fixed = (d: Exported<V>): boolean => d.labels !== undefined;
    if (!fixed(declaration) || !seen.parts.every(fixed) || seen.kind !== declaration.kind || seen.help !== declaration.help || seen.labelNames.join() !== labelNames.join()) {
      throw new Error(`${name}: declared at ${seen.paths.join(', ')} and ${path.join('.')} with different kinds, help or labels`);
    }
    seen.paths.push(path.join('.'));
    seen.parts.push(declaration);
  }
  return [...byName.values()];
}

/** Registers every metric `tree` exports, read from `source.lifetime()` when scraped. */
export function registerDeclared<V>(registry: Registry, prefix: string, tree: DeclarationTree<V>, source: Pick<StatsSource<V>, 'lifetime'>): void {
  for (const metric of exportedMetrics(prefix, tree)) {
    const only = metric.parts[0] as Exported<V>;
    const spec = { name: metric.name, help: metric.help, ...(only.aggregator === undefined ? {} : { aggregator: only.aggregator }) };
    if (metric.labelNames.length === 0 && !('label' in only)) {
      const divideBy = only.divideBy ?? 1;
      const read = (): number => only.read(source.lifetime()) / divideBy;
      if (metric.kind === 'counter') scrapedCounter(registry, { ...spec, read });
      else scrapedGauge(registry, { ...spec, read });
      continue;
    }
    const read = (): Sample<string>[] => {
      const view = source.lifetime();
      return metric.parts.flatMap((d) => samplesOf(d, view));
    };
    const labelled = { ...spec, labelNames: metric.labelNames, read };
    if (metric.kind === 'counter') scrapedCounterBy(registry, labelled);
    else scrapedGaugeBy(registry, labelled);
  }
}
