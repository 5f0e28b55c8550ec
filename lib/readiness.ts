/**
 * A component's readiness: where it is in its life (starting, serving, draining) and, while serving, whether the
 * dependencies it cannot do its work without answer (`ReadinessCheck`s: the proxy's ext_proc server, extproc's
 * control plane). Liveness is not here: a process that answers `/live` is alive.
 */
import type { ReadinessCheck } from './health-probe.js';

export type Readiness = 'live' | 'not-ready' | 'draining';

export interface ReadinessReport {
  readonly state: Readiness;
  /** Why the component is not ready (empty when it is). */
  readonly reasons: readonly string[];
}

export type Phase = 'starting' | 'serving' | 'draining';

export const READY: ReadinessReport = Object.freeze({ state: 'live', reasons: Object.freeze([]) });

/** How long `/ready` waits for a check that has not answered even once (its first answer decides). */
export const FIRST_ANSWER_WAIT_MS = 2000;

/** The report for `phase` and `checks` (a check still waiting for its first answer is waited for, briefly). */
export async function readinessReport(phase: Phase, checks: readonly ReadinessCheck[]): Promise<ReadinessReport> {
  if (phase === 'draining') return { state: 'draining', reasons: [] };
  if (phase === 'starting') return { state: 'not-ready', reasons: ['starting'] };
  await Promise.all(checks.map((c) => c.settled(FIRST_ANSWER_WAIT_MS)));
  const reasons: string[] = [];
  for (const c of checks) {
    const s = c.state();
    if (s.kind === 'failing') reasons.push(`${s.reason} (for ${((Date.now() - s.since) / 1000).toFixed(1)} s)`);
    else if (s.kind === 'pending') reasons.push(`${c.name}: no health check answered yet`);
  }
  return reasons.length === 0 ? READY : { state: 'not-ready', reasons };
}

/** A readiness that is only a phase (no dependency checks). */
export function phaseReport(phase: Phase): ReadinessReport {
  if (phase === 'serving') return READY;
  return phase === 'draining' ? { state: 'draining', reasons: [] } : { state: 'not-ready', reasons: ['starting'] };
}
