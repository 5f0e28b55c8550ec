/** The `resolver` block of the proxy's `/stats` JSON: who resolves cache misses, and what it cost. */

export interface ResolverStatsBlock {
  readonly kind: 'extproc' | 'apiserver';
  /** ResumeActor calls the proxy made itself, by gRPC code name (always empty with the extproc resolver). */
  readonly resumeCalls: Readonly<Record<string, number>>;
  /** Requests that joined a resume already under way (apiserver resolver only). */
  readonly flightJoins: number;
}

export const EXTPROC_RESOLVER_STATS: ResolverStatsBlock = Object.freeze({ kind: 'extproc', resumeCalls: Object.freeze({}), flightJoins: 0 });
