/**
 * The `resolver` block of the proxy's `/stats` JSON: who resolves cache misses, and what it cost, declared once
 * with its metric (`RESOLVER_STATS`). Both resolvers report the same shape (ext-proc: extproc makes the ResumeActor
 * calls, so the proxy's own counts stay 0 and the metric is not registered).
 */
import { declare, type StatsOf } from '../../lib/stats/declare.js';

/** What the declarations read: the resolver in use and its counts (since the last reset, or lifetime). */
export interface ResolverView {
  readonly kind: 'extproc' | 'apiserver';
  /** ResumeActor calls the proxy made itself, by gRPC code name (always empty with the extproc resolver). */
  readonly resumeCalls: Readonly<Record<string, number>>;
  /** Requests that joined a resume already under way (always 0 with the extproc resolver). */
  readonly flightJoins: number;
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
    flightJoins: { kind: 'stat', help: 'Requests that joined a resume already under way.', read: (v) => v.flightJoins },
  },
});

export type ResolverStatsBlock = StatsOf<typeof RESOLVER_STATS>['resolver'];
