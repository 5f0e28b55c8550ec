/**
 * The faults scenario's bookkeeping, pure: the client's answers tallied by the phase they arrived in, and each
 * phase's change in the proxy's and the stub's counters (the /stats read when the phase began and when it ended).
 */
import { readProxy, readStub } from './admin.js';
import type { WindowStats } from './arm-result.js';
import type { FaultPhase } from './types.js';

interface ClientTally {
  requests: number;
  non2xx: number;
  errors: number;
  statusCounts: Record<string, number>;
}

/** Counts answers and failed requests into the current phase. */
export class PhaseTally {
  readonly #phases = new Map<string, ClientTally>();
  #current: ClientTally | undefined;

  /** From now on, answers count for `name`. */
  begin(name: string): void {
    this.#current = { requests: 0, non2xx: 0, errors: 0, statusCounts: {} };
    this.#phases.set(name, this.#current);
  }

  response(status: number): void {
    const t = this.#current;
    if (t === undefined) return;
    t.requests++;
    if (status < 200 || status > 299) t.non2xx++;
    t.statusCounts[status] = (t.statusCounts[status] ?? 0) + 1;
  }

  error(): void {
    if (this.#current) this.#current.errors++;
  }

  of(name: string): ClientTally {
    return this.#phases.get(name) ?? { requests: 0, non2xx: 0, errors: 0, statusCounts: {} };
  }
}

/** One phase boundary: its name and description, when it began (ms) and the /stats read then. */
export interface PhaseMark {
  readonly name: string;
  readonly description: string;
  readonly atMs: number;
  readonly stats: WindowStats;
}

function diff(after: Readonly<Record<string, number>>, before: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const n = (after[k] ?? 0) - (before[k] ?? 0);
    if (n !== 0) out[k] = n;
  }
  return out;
}

const sum = (r: Readonly<Record<string, number>>): number => Object.values(r).reduce((a, b) => a + b, 0);

/** The phase from `mark` to `end` (the next mark's time and stats). */
export function buildPhase(mark: PhaseMark, end: { readonly atMs: number; readonly stats: WindowStats }, tally: PhaseTally): FaultPhase {
  const p0 = readProxy(mark.stats.proxy);
  const p1 = readProxy(end.stats.proxy);
  const s0 = readStub(mark.stats['apiserver-stub']);
  const s1 = readStub(end.stats['apiserver-stub']);
  const client = tally.of(mark.name);
  const notReplayable = p1.resetsNotReplayable - p0.resetsNotReplayable;
  return {
    name: mark.name,
    description: mark.description,
    durationS: Math.max(0, end.atMs - mark.atMs) / 1000,
    requests: client.requests,
    non2xx: client.non2xx,
    non2xxNotReplayable: Math.min(notReplayable, client.statusCounts['502'] ?? 0),
    errors: client.errors,
    statusCounts: client.statusCounts,
    hits: p1.hits - p0.hits,
    misses: p1.misses - p0.misses,
    evictions: diff(p1.evictions, p0.evictions),
    connectFailures: p1.connectFailures - p0.connectFailures,
    failedFast: p1.failedFast - p0.failedFast,
    resets: p1.resets - p0.resets,
    resetsNotReplayable: notReplayable,
    reruns: sum(p1.reruns) - sum(p0.reruns),
    extprocRetries: p1.extprocRetries - p0.extprocRetries,
    resumeByCode: diff(s1.resumeByCode, s0.resumeByCode),
  };
}
