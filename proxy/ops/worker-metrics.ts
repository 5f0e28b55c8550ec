/**
 * Upstream attempts and their failures per worker, with a bounded label set: the metrics
 * `actor_edge_proxy_worker_requests_total{worker}` and `actor_edge_proxy_worker_errors_total{worker,reason}` and
 * the admin's `GET /upstreams`.
 *
 * At most `maxWorkers` addresses have series of their own. A new address takes a free slot; when none is free it
 * takes the least recently used slot if that worker has been idle for `idleMs` (its series then disappear and
 * start again from 0 if it comes back, as a new series), and otherwise it is counted under `worker="other"`. So
 * with more active workers than slots the busiest keep theirs and the series do not churn, and a fleet whose
 * workers come and go (pods replaced) keeps naming the current ones. A slot idle for `idleMs` has been scraped
 * many times since its last count, so dropping it loses nothing.
 *
 * Worker addresses come from ext_proc's route (the control plane), never from a client. Plain numbers, no
 * allocation per call once an address has its slot; read by Prometheus when scraped.
 */
import { rerunReason, type UpstreamOutcome } from '../api/filter.js';

/** Why an attempt to a worker failed: its answer or what the connection did. */
export type WorkerErrorReason = 'connect' | 'ejected' | 'reset' | 'timeout' | 'identity' | 'stale' | '5xx';
export const WORKER_ERROR_REASONS: readonly WorkerErrorReason[] = Object.freeze(['connect', 'ejected', 'reset', 'timeout', 'identity', 'stale', '5xx']);

/** The label value of every address without a slot of its own. */
export const OTHER_WORKERS = 'other';
export const DEFAULT_MAX_WORKER_LABELS = 64;
export const DEFAULT_WORKER_LABEL_IDLE_MS = 5 * 60_000;

class WorkerSlot {
  requests = 0;
  readonly errors = new Float64Array(WORKER_ERROR_REASONS.length);
  lastUsed = 0;
  constructor(readonly address: string) {}
}

/** One address's counts, as `GET /upstreams` and the metrics read them. */
export interface WorkerCounts {
  readonly worker: string;
  readonly requests: number;
  readonly errors: Readonly<Record<WorkerErrorReason, number>>;
  /** Milliseconds since its last attempt (null for `other`). */
  readonly idleMs: number | null;
}

/** The error reason of an outcome, or undefined when the attempt did not fail because of the worker. */
export function workerErrorReason(outcome: UpstreamOutcome): WorkerErrorReason | undefined {
  switch (outcome.kind) {
    case 'response':
      return outcome.status >= 500 ? '5xx' : undefined;
    case 'connect-failed':
      if (outcome.ejected === true) return 'ejected'; // failed at once: the address was down
      return rerunReason(outcome);
    case 'stale':
    case 'reset':
      return rerunReason(outcome);
    case 'timeout':
      return 'timeout';
    case 'identity-rejected':
      return 'identity';
    case 'invalid-request':
    case 'cancelled':
      return undefined;
  }
}

export interface WorkerMetricsOptions {
  readonly maxWorkers?: number;
  readonly idleMs?: number;
  /** Millisecond clock (tests inject one). */
  readonly clock?: { now(): number };
}

export class WorkerMetrics {
  readonly maxWorkers: number;
  readonly #idleMs: number;
  readonly #clock: { now(): number };
  readonly #slots = new Map<string, WorkerSlot>();
  readonly #other = new WorkerSlot(OTHER_WORKERS);

  constructor(opts: WorkerMetricsOptions = {}) {
    this.maxWorkers = opts.maxWorkers ?? DEFAULT_MAX_WORKER_LABELS;
    this.#idleMs = opts.idleMs ?? DEFAULT_WORKER_LABEL_IDLE_MS;
    this.#clock = opts.clock ?? Date;
  }

  /**
   * One upstream attempt to `address` ended with `outcome`: counts the attempt, and its error if it failed
   * because of the worker. Call it once per attempt, where the router classifies the attempt's outcome
   * (`invalid-request` is not counted: no worker was involved).
   */
  observe(address: string, outcome: UpstreamOutcome): void {
    if (outcome.kind === 'invalid-request') return;
    const slot = this.#slotOf(address);
    slot.requests++;
    const reason = workerErrorReason(outcome);
    if (reason !== undefined) slot.errors[WORKER_ERROR_REASONS.indexOf(reason)]!++;
  }

  #slotOf(address: string): WorkerSlot {
    const now = this.#clock.now();
    let slot = this.#slots.get(address);
    if (slot === undefined) slot = this.#claim(address, now);
    slot.lastUsed = now;
    return slot;
  }

  #claim(address: string, now: number): WorkerSlot {
    if (this.#slots.size >= this.maxWorkers) {
      let oldest: WorkerSlot | undefined;
      for (const s of this.#slots.values()) if (oldest === undefined || s.lastUsed < oldest.lastUsed) oldest = s;
      if (oldest === undefined || now - oldest.lastUsed < this.#idleMs) return this.#other;
      this.#slots.delete(oldest.address);
    }
    const slot = new WorkerSlot(address);
    this.#slots.set(address, slot);
    return slot;
  }

  /** Every address with a slot, busiest first, then `other` when it has counted anything. */
  counts(): WorkerCounts[] {
    const now = this.#clock.now();
    const view = (s: WorkerSlot, idle: number | null): WorkerCounts => ({
      worker: s.address,
      requests: s.requests,
      errors: Object.fromEntries(WORKER_ERROR_REASONS.map((r, i) => [r, s.errors[i] as number])) as Record<WorkerErrorReason, number>,
      idleMs: idle,
    });
    const out = [...this.#slots.values()].sort((a, b) => b.requests - a.requests).map((s) => view(s, Math.max(0, now - s.lastUsed)));
    if (this.#other.requests > 0) out.push(view(this.#other, null));
    return out;
  }
}
