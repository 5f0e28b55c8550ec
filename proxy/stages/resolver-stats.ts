/**
 * The `resolver` block of the proxy's `/stats` JSON: who resolves cache misses, and what it cost, declared once
 * with its metric (`RESOLVER_STATS`). Both resolvers report the same shape (ext-proc: extproc makes the ResumeActor
 * calls, so the proxy's own counts stay 0 and the metric is not registered). A `kind: 'tally'` is its own storage
 * (`resolverTallies()`); the calls by gRPC code are kept by the code seen.
 */
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../lib/stats/declare.js';

/**
 * What the declarations read: the resolver in use, and its counts (since the last reset, or lifetime): the tallies
 * as `{ resolver: … }` (none with the extproc resolver: every tally reads 0) and the calls by code.
 */
export interface ResolverView {
  readonly kind: 'extproc' | 'apiserver';
  readonly tallies: object;
  /** ResumeActor calls the proxy made itself, by gRPC code name (always empty with the extproc resolver). */
  readonly resumeCalls: Readonly<Record<string, number>>;
}

export const RESOLVER_STATS = declare<ResolverView>()({
  resolver: {
    kind: { kind: 'stat', help: 'Who resolves cache misses: extproc, or the proxy itself (--resolver apiserver).', read: (v) => v.kind },
    resumeCalls: {
      kind: 'counter',
      label: 'code',
      help: 'ResumeActor calls made by the proxy itself (--resolver apiserver), by gRPC code.',
      read: (v) => ({ ...v.resumeCalls }),
    },
    flightJoins: { kind: 'tally', exported: false, help: 'Requests that joined a resume already under way.' },
  },
});

export type ResolverStatsBlock = StatsOf<typeof RESOLVER_STATS>['resolver'];

/** The resolver's tallies, one per tally of `RESOLVER_STATS` at its path below `resolver`. */
export type ResolverTallies = TalliesOf<typeof RESOLVER_STATS>['resolver'];

export function resolverTallies(): ResolverTallies {
  return talliesOf(RESOLVER_STATS).resolver;
}
