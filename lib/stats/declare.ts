/**
 * Each counter declared once, as Envoy declares a stat once: a component lists its counters, gauges and other
 * `/stats` values in one tree of declarations, and `/stats` (`statsBlock`), `/metrics` (`registerDeclared`) and the
 * `/stats` document's type (`StatsOf`) are all derived from it (`derive.ts`).
 *
 * A declaration's place in the tree is its `path` in `/stats` (`cache.hits`: key `hits` of the block `cache`), and
 * the order of the tree is the order of the JSON. Its Prometheus name derives from the path by one rule
 * (`metricName`: the component's prefix, the path's words in snake case, `_total` for a counter:
 * `cache.evictions` → `actor_edge_proxy_cache_evictions_total`), unless `name` keeps an older name that outside
 * scripts read.
 *
 * `read` takes the component's view of its state (`V`): for `/stats` the counts since the last `POST /stats/reset`,
 * for `/metrics` the lifetime counts (a Prometheus counter never goes down), and in both the live levels for gauges
 * (`StatsSource`). A counter can be its own storage too (`kind: 'tally'`, `talliesOf`): then a new counter is its
 * declaration and the `++` that bumps it.
 */
import type { Aggregator } from '../prom-metrics.js';

interface Exported {
  readonly help: string;
  /** The Prometheus name without the component's prefix, when it is not the one `metricName` derives (kept for readers of older names). */
  readonly name?: string;
  /** How the proxy's cluster primary merges it over its workers (default `sum`). */
  readonly aggregator?: Aggregator;
  /** The metric's value is the read value divided by `divideBy`, when the units differ (1000: milliseconds in `/stats`, seconds in Prometheus). */
  readonly divideBy?: number;
  /**
   * Fixed labels of this declaration's samples, when several declarations make up one metric (each its own label
   * values): they must then share `name`, `kind`, `help` and the label names.
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** One number: in `/stats` at its path, in `/metrics` as a sample of its metric. */
export interface ValueDeclaration<V> extends Exported {
  readonly kind: 'counter' | 'gauge';
  read(view: V): number;
  /** What `/stats` shows instead of the number read (e.g. rounded); the metric exports the number. */
  show?(value: number): unknown;
}

/**
 * Numbers by one label (`{"stale": 3, "lru": 1}`): in `/stats` the record at its path (or `show` of it), in
 * `/metrics` one sample per key, labelled `label` (after the fixed `labels`, if any).
 */
export interface LabelledDeclaration<V> extends Exported {
  readonly kind: 'counter' | 'gauge';
  readonly label: string;
  read(view: V): Readonly<Record<string, number>>;
  /** What `/stats` shows at the path instead of the record (e.g. status codes folded into classes). */
  show?(counts: Readonly<Record<string, number>>): unknown;
}

/**
 * A `/stats` value that is not exported to Prometheus: a setting (`enabled`), a ratio or sum Prometheus computes by
 * query, or a count no dashboard has asked for yet (exporting it is `kind: 'counter'` and nothing else).
 */
export interface StatDeclaration<V> {
  readonly kind: 'stat';
  readonly help: string;
  read(view: V): unknown;
}

/**
 * A counter whose storage the declaration is too: `talliesOf` creates a zero at its path, the component bumps it
 * (`tallies.stale++`), `/stats` reads it since the last reset and `/metrics` over the lifetime, from the view's
 * `tallies` (the tree's tallies, rooted as the tree is). Exported as a counter unless `exported` is false.
 *
 * With `label` and `keys` it counts by one label of a fixed set of values: its storage is a record with a zero per
 * key, in order (`tallies.reruns.stale++`), `/stats` shows the record and `/metrics` one sample per key, labelled
 * `label` (after the fixed `labels`, if any).
 */
export interface TallyDeclaration extends Exported {
  readonly kind: 'tally';
  readonly exported?: boolean;
  readonly label?: string;
  /** The label's values (only with `label`). */
  readonly keys?: readonly string[];
}

export type Declaration<V> = ValueDeclaration<V> | LabelledDeclaration<V> | StatDeclaration<V> | TallyDeclaration;

/** A block of `/stats`: its keys in order, each a declaration or a nested block. */
export interface DeclarationTree<V> {
  readonly [key: string]: Declaration<V> | DeclarationTree<V>;
}

/** The `/stats` JSON a tree of declarations gives: each declaration's `show` or `read` result at its key. */
export type StatsOf<T> = {
  readonly [K in keyof T]: T[K] extends { kind: 'tally' }
    ? TallyOf<T[K]>
    : T[K] extends { show(counts: never): infer S }
      ? S
      : T[K] extends { read(view: never): infer R }
        ? R
        : StatsOf<T[K]>;
};

/** One tally's storage: a number, or a record of numbers by its keys. */
export type TallyOf<D> = D extends { keys: readonly (infer N extends string)[] } ? Record<N, number> : number;

/** The storage of a tree's tally declarations: a tally at each tally's path (subtrees kept, other declarations left out). */
export type TalliesOf<T> = {
  -readonly [K in keyof T as T[K] extends { kind: 'tally' } ? K : T[K] extends { kind: string } ? never : K]: T[K] extends { kind: 'tally' } ? TallyOf<T[K]> : TalliesOf<T[K]>;
};

/** Zeroed storage for the tally declarations of `tree`: a 0 per tally, a record of 0s per labelled one. */
export function talliesOf<T extends DeclarationTree<never>>(tree: T): TalliesOf<T> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(tree)) {
    if (!isDeclaration(node)) out[key] = talliesOf(node);
    else if (node.kind === 'tally') out[key] = node.keys === undefined ? 0 : Object.fromEntries(node.keys.map((k) => [k, 0]));
  }
  return out as TalliesOf<T>;
}

function storedAt(view: unknown, path: readonly string[]): unknown {
  let at: unknown = (view as { tallies?: unknown } | null)?.tallies;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

/** The number at `path` of a view's `tallies` (0 when it is not there). */
export function tallyAt(view: unknown, path: readonly string[]): number {
  const at = storedAt(view, path);
  return typeof at === 'number' ? at : 0;
}

/** The counts by key of the labelled tally at `path` of a view's `tallies`, in the order of `keys` (0 for a key not there). */
export function tallyByKey(view: unknown, path: readonly string[], keys: readonly string[]): Record<string, number> {
  const at = storedAt(view, path) as Readonly<Record<string, unknown>> | undefined;
  const out: Record<string, number> = {};
  for (const k of keys) {
    const n = at?.[k];
    out[k] = typeof n === 'number' ? n : 0;
  }
  return out;
}

/** Checks a tree against its view type while keeping its literal shape (for `StatsOf`). */
export function declare<V>(): <T extends DeclarationTree<V>>(tree: T) => T {
  return (tree) => tree;
}

export function isDeclaration<V>(node: Declaration<V> | DeclarationTree<V>): node is Declaration<V> {
  const kind = (node as { kind?: unknown }).kind;
  return typeof kind === 'string' && (kind === 'tally' || typeof (node as { read?: unknown }).read === 'function');
}

export function isExported<V>(d: Declaration<V>): d is ValueDeclaration<V> | LabelledDeclaration<V> | TallyDeclaration {
  return d.kind === 'tally' ? d.exported !== false : d.kind !== 'stat';
}

/** One declaration with its path (`cache.evictions`, as segments). */
export interface Placed<V> {
  readonly path: readonly string[];
  readonly declaration: Declaration<V>;
}

/** Every declaration of the tree, in order, with its path. */
export function declarations<V>(tree: DeclarationTree<V>, at: readonly string[] = []): Placed<V>[] {
  const out: Placed<V>[] = [];
  for (const [key, node] of Object.entries(tree)) {
    const path = [...at, key];
    if (isDeclaration(node)) out.push({ path, declaration: node });
    else out.push(...declarations(node, path));
  }
  return out;
}

function snake(word: string): string {
  return word.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The Prometheus name: `prefix` + the path in snake case + `_total` for a counter, or `prefix` + `name` when given. */
export function metricName(prefix: string, path: readonly string[], d: ValueDeclaration<unknown> | LabelledDeclaration<unknown> | TallyDeclaration): string {
  if (d.name !== undefined) return `${prefix}${d.name}`;
  return `${prefix}${path.map(snake).join('_')}${d.kind === 'gauge' ? '' : '_total'}`;
}
