/**
 * `/stats` and `/metrics` from one tree of declarations (`declare.ts`): `statsBlock` builds the JSON block from a
 * view of the component's state, `registerDeclared` registers every exported declaration with prom-client (read
 * from the lifetime view when scraped, through lib/prom-metrics.ts), and `exportedMetrics` lists what it registers,
 * each metric with the `/stats` paths it is read from.
 */
import type { Registry } from 'prom-client';
import { samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, scrapedGaugeBy, type Sample } from '../prom-metrics.js';
import {
  declarations,
  isDeclaration,
  isExported,
  metricName,
  tallyAt,
  tallyByKey,
  type DeclarationTree,
  type LabelledDeclaration,
  type StatsOf,
  type TallyDeclaration,
  type ValueDeclaration,
} from './declare.js';

/** Where the declarations read from: the counts since the last reset (`/stats`), or since the process started (`/metrics`). */
export interface StatsSource<V> {
  sinceReset(): V;
  lifetime(): V;
}

/** The `/stats` block of `tree`, every declaration read from `view` (a tally from `view.tallies`), in the tree's order. */
export function statsBlock<V, T extends DeclarationTree<V>>(tree: T, view: V): StatsOf<T> {
  return blockAt(tree, view, []) as StatsOf<T>;
}

function blockAt<V>(tree: DeclarationTree<V>, view: V, at: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(tree)) {
    if (!isDeclaration(node)) out[key] = blockAt(node, view, [...at, key]);
    else if (node.kind === 'tally') out[key] = node.keys === undefined ? tallyAt(view, [...at, key]) : tallyByKey(view, [...at, key], node.keys);
    else if (node.kind !== 'stat' && node.show !== undefined) out[key] = (node.show as (value: unknown) => unknown)(node.read(view));
    else out[key] = node.read(view);
  }
  return out;
}

type Exported<V> = ValueDeclaration<V> | LabelledDeclaration<V> | TallyDeclaration;

/** One declaration of a metric, with its path. */
interface Part<V> {
  readonly path: readonly string[];
  readonly declaration: Exported<V>;
}

/** One metric and the declarations it is made of (one, or several that each give one label value). */
export interface DeclaredMetric<V> {
  readonly name: string;
  readonly kind: 'counter' | 'gauge';
  readonly help: string;
  readonly labelNames: readonly string[];
  /** The `/stats` paths it is read from (`cache.evictions`). */
  readonly paths: readonly string[];
  readonly parts: readonly Part<V>[];
}

/** The label a labelled declaration (or labelled tally) counts by. */
function labelOf<V>(d: Exported<V>): string | undefined {
  return 'label' in d ? d.label : undefined;
}

function labelNamesOf<V>(d: Exported<V>): string[] {
  const fixed = Object.keys(d.labels ?? {});
  const label = labelOf(d);
  return label === undefined ? fixed : [...fixed, label];
}

/** A number's value in the view (a tally's from `view.tallies`), in the metric's unit. */
function valueOf<V>({ path, declaration: d }: Part<V>, view: V): number {
  const n = d.kind === 'tally' ? tallyAt(view, path) : (d as ValueDeclaration<V>).read(view);
  return n / (d.divideBy ?? 1);
}

/** One declaration's samples: its fixed labels, and its label's keys for a labelled one; in the metric's unit. */
function samplesOf<V>(part: Part<V>, view: V): Sample<string>[] {
  const d = part.declaration;
  const fixed = d.labels ?? {};
  const divideBy = d.divideBy ?? 1;
  const label = labelOf(d);
  if (label === undefined) return [[fixed, valueOf(part, view)]];
  const counts = d.kind === 'tally' ? tallyByKey(view, part.path, d.keys ?? []) : (d as LabelledDeclaration<V>).read(view);
  return samplesBy(label, counts).map(([labels, n]): Sample<string> => [{ ...fixed, ...labels }, n / divideBy]);
}

/** The metrics `tree` exports under `prefix`, in the tree's order; throws when declarations sharing a name disagree. */
export function exportedMetrics<V>(prefix: string, tree: DeclarationTree<V>): DeclaredMetric<V>[] {
  const byName = new Map<string, { name: string; kind: 'counter' | 'gauge'; help: string; labelNames: string[]; paths: string[]; parts: Part<V>[] }>();
  for (const { path, declaration } of declarations(tree)) {
    if (!isExported(declaration)) continue;
    const name = metricName(prefix, path, declaration);
    const labelNames = labelNamesOf(declaration);
    const kind = declaration.kind === 'tally' ? 'counter' : declaration.kind;
    const seen = byName.get(name);
    if (seen === undefined) {
      byName.set(name, { name, kind, help: declaration.help, labelNames, paths: [path.join('.')], parts: [{ path, declaration }] });
      continue;
    }
    const fixed = (d: Exported<V>): boolean => d.labels !== undefined;
    if (!fixed(declaration) || !seen.parts.every((p) => fixed(p.declaration)) || seen.kind !== kind || seen.help !== declaration.help || seen.labelNames.join() !== labelNames.join()) {
      throw new Error(`${name}: declared at ${seen.paths.join(', ')} and ${path.join('.')} with different kinds, help or labels`);
    }
    seen.paths.push(path.join('.'));
    seen.parts.push({ path, declaration });
  }
  return [...byName.values()];
}

/** Registers every metric `tree` exports, read from `source.lifetime()` when scraped. */
export function registerDeclared<V>(registry: Registry, prefix: string, tree: DeclarationTree<V>, source: Pick<StatsSource<V>, 'lifetime'>): void {
  for (const metric of exportedMetrics(prefix, tree)) {
    const first = metric.parts[0] as Part<V>;
    const only = first.declaration;
    const spec = { name: metric.name, help: metric.help, ...(only.aggregator === undefined ? {} : { aggregator: only.aggregator }) };
    if (metric.labelNames.length === 0 && labelOf(only) === undefined) {
      const read = (): number => valueOf(first, source.lifetime());
      if (metric.kind === 'counter') scrapedCounter(registry, { ...spec, read });
      else scrapedGauge(registry, { ...spec, read });
      continue;
    }
    const read = (): Sample<string>[] => {
      const view = source.lifetime();
      return metric.parts.flatMap((p) => samplesOf(p, view));
    };
    const labelled = { ...spec, labelNames: metric.labelNames, read };
    if (metric.kind === 'counter') scrapedCounterBy(registry, labelled);
    else scrapedGaugeBy(registry, labelled);
  }
}
