/**
 * The `resolver` block of the proxy's `/stats` JSON: who resolves cache misses, and what it cost. Both resolvers
 * report the same shape (ext-proc: extproc makes the ResumeActor calls, so the proxy's own counts stay 0).
 */

export interface ResolverStatsBlock {
  readonly kind: 'extproc' | 'apiserver';
  /** ResumeActor calls the proxy made itself, by gRPC code name (always empty with the extproc resolver). */
  readonly resumeCalls: Readonly<Record<string, number>>;
  /** Requests that joined a resume already under way (always 0 with the extproc resolver). */
  readonly flightJoins: number;
}
