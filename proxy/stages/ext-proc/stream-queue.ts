/**
 * The bound on misses in flight to ext_proc (`--extproc-max-streams`): a request that needs the slow path takes one
 * of that many slots for its request phase (from its stream's first message to the route, the retries of a stream
 * that could not be opened included) and gives it back when that phase ends. When every slot is taken it waits in
 * a FIFO queue: for `--extproc-queue-timeout-ms` or what is left of its re-run budget, whichever is first (then 503
 * `PROXY_ERR_EXTPROC_QUEUE_TIMEOUT`), and the queue holds at most `--extproc-queue-max-waiting` (one more is
 * answered 503 `PROXY_ERR_EXTPROC_QUEUE_FULL` at once). A slot given back goes to the first waiter directly, so
 * nobody overtakes the queue; a waiter whose client leaves stops waiting at once. A storm of cold actors thus
 * opens at most that many streams at once (concurrent misses of one actor already share one: `miss-flights.ts`),
 * and the rest wait their turn or are answered at once, never piling up without bound. Counted: the waits, the
 * timeouts and the overflows; the slots in use and the waiters are levels. 0 slots: no bound, nothing counted.
 */
import { performance } from 'node:perf_hooks';

export interface StreamQueueLimits {
  /** `--extproc-max-streams` (0: no bound). */
  readonly maxStreams: number;
  /** `--extproc-queue-max-waiting`: waiters at most (0: none, a request finding every slot taken is refused at once). */
  readonly maxWaiting: number;
}

/** What the queue counts (`ops/overload/tallies.ts`). */
export interface StreamQueueTallies {
  readonly counts: { readonly extprocQueue: { queued: number } };
  extprocQueueWaiting: number;
  extprocStreamsInFlight: number;
  readonly shed: { extprocQueueTimeout: number; extprocQueueFull: number };
}

export type Admission =
  /** A slot is the request's until it calls `release` (idempotent). */
  | { readonly kind: 'admitted'; readonly release: () => void; readonly waitedMs: number }
  | { readonly kind: 'timeout'; readonly waitedMs: number }
  | { readonly kind: 'full' }
  /** The client went away while it waited. */
  | { readonly kind: 'aborted' };

interface Waiter {
  readonly since: number;
  readonly resolve: (a: Admission) => void;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

const NOTHING = (): void => undefined;
const UNBOUNDED: Admission = Object.freeze({ kind: 'admitted', release: NOTHING, waitedMs: 0 });
const FULL: Admission = Object.freeze({ kind: 'full' });
const ABORTED: Admission = Object.freeze({ kind: 'aborted' });

export class StreamQueue {
  readonly limits: StreamQueueLimits;
  readonly #tallies: StreamQueueTallies;
  readonly #clock: { now(): number };
  /** In arrival order (a Set keeps insertion order; a waiter that leaves is deleted in O(1)). */
  readonly #waiters = new Set<Waiter>();

  constructor(limits: StreamQueueLimits, tallies: StreamQueueTallies, clock: { now(): number } = performance) {
    this.limits = limits;
    this.#tallies = tallies;
    this.#clock = clock;
  }

  /** Slots taken now. */
  get inFlight(): number {
    return this.#tallies.extprocStreamsInFlight;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * A slot now (a plain value), or a promise of one after at most `waitMs` in the queue; `full` at once when the
   * queue is full, `timeout` at once when there is no time left to wait.
   */
  acquire(waitMs: number, signal?: AbortSignal): Admission | Promise<Admission> {
    const { maxStreams, maxWaiting } = this.limits;
    if (maxStreams === 0) return UNBOUNDED;
    const t = this.#tallies;
    if (t.extprocStreamsInFlight < maxStreams && this.#waiters.size === 0) {
      t.extprocStreamsInFlight++;
      return { kind: 'admitted', release: this.#releaser(), waitedMs: 0 };
    }
    if (signal?.aborted === true) return ABORTED;
    if (this.#waiters.size >= maxWaiting) {
      t.shed.extprocQueueFull++;
      return FULL;
    }
    if (!(waitMs > 0)) {
      t.shed.extprocQueueTimeout++;
      return { kind: 'timeout', waitedMs: 0 };
    }
    t.counts.extprocQueue.queued++;
    t.extprocQueueWaiting++;
    return new Promise<Admission>((resolve) => {
      const since = this.#clock.now();
      const waiter: Waiter = {
        since,
        resolve,
        signal,
        timer: setTimeout(() => {
          if (!this.#leave(waiter)) return;
          t.shed.extprocQueueTimeout++;
          resolve({ kind: 'timeout', waitedMs: this.#clock.now() - since });
        }, waitMs),
        onAbort: () => {
          if (this.#leave(waiter)) resolve(ABORTED);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  /** Takes `waiter` out of the queue (false: it was not in it any more). */
  #leave(waiter: Waiter): boolean {
    if (!this.#waiters.delete(waiter)) return false;
    this.#tallies.extprocQueueWaiting--;
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    return true;
  }

  /** The release of one slot: hands it to the first waiter, or frees it. Once only. */
  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const first = this.#waiters.values().next();
      if (first.done === true) {
        this.#tallies.extprocStreamsInFlight--;
        return;
      }
      const waiter = first.value;
      this.#leave(waiter);
      waiter.resolve({ kind: 'admitted', release: this.#releaser(), waitedMs: this.#clock.now() - waiter.since });
    };
  }
}
