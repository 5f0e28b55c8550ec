/**
 * A periodic gRPC health check of one dependency (the proxy checks its ext_proc server, extproc its control plane),
 * as a readiness check: one `Check` in flight at a time, the next one `intervalMs` after the previous one started
 * (at once when it took longer), each with a deadline of `timeoutMs`.
 *
 * State: `pending` until the first answer, which decides at once; from `ok` it takes `unhealthyThreshold`
 * consecutive failures to become `failing` (one slow answer on a busy machine is not an outage); one good answer
 * makes it `ok` again. So a dependency that is killed fails readiness within `unhealthyThreshold` intervals, one
 * that hangs within about `unhealthyThreshold` × max(interval, timeout) (with the default threshold at most
 * interval + max(interval, timeout) + timeout), and either recovers by itself within one interval of answering
 * again. Time is read from `clock` (`lib/clock.ts`), so a test can drive it by hand (`health-probe.test.ts`).
 */
import { REAL_CLOCK, type Clock } from './clock.js';
import { checkHealth, judgeAnswer, type HealthAnswer, type HealthClient } from './grpc-health.js';

export type CheckState =
  | { readonly kind: 'pending' }
  | { readonly kind: 'ok' }
  /** `since`: epoch ms of the first failure of this run of failures. */
  | { readonly kind: 'failing'; readonly reason: string; readonly since: number };

/** What the readiness of a component consults: a named check with a state. */
export interface ReadinessCheck {
  readonly name: string;
  state(): CheckState;
  /** Resolves once the state is not `pending` (or after `maxWaitMs`). */
  settled(maxWaitMs: number): Promise<void>;
}

export interface HealthProbeOptions {
  /** What is checked, for messages: e.g. `ext_proc 127.0.0.1:50051`. */
  readonly name: string;
  /**
   * The client the checks use; a function is asked before every check (it follows a channel that is replaced,
   * e.g. when credentials rotate) and its clients are never closed by the probe.
   */
  readonly client: HealthClient | (() => HealthClient);
  /** The service name asked for ('' is the whole server). */
  readonly service: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Consecutive failures that turn `ok` into `failing` (default 2). */
  readonly unhealthyThreshold?: number;
  /** Called when the state changes kind (ok ↔ failing, pending → either). */
  readonly onChange?: (state: CheckState) => void;
  /** Closes the client (not one from a function) when the probe stops (default true: the probe owns it). */
  readonly ownsClient?: boolean;
  /** When the checks start and failures are dated (default: the real clock). */
  readonly clock?: Clock;
}

export const DEFAULT_UNHEALTHY_THRESHOLD = 2;

export class HealthProbe implements ReadinessCheck {
  readonly name: string;
  readonly #opts: HealthProbeOptions;
  readonly #clock: Clock;
  #state: CheckState = { kind: 'pending' };
  #failures = 0;
  #firstFailure = 0;
  /** Cancels the timer of the next check. */
  #cancelTimer: (() => void) | undefined;
  #cancel: (() => void) | undefined;
  #stopped = false;
  readonly #waiters = new Set<() => void>();
  /** Checks answered and failed so far (for metrics). */
  readonly counts = { ok: 0, failed: 0 };

  constructor(opts: HealthProbeOptions) {
    this.name = opts.name;
    this.#opts = opts;
    this.#clock = opts.clock ?? REAL_CLOCK;
  }

  /** Starts checking (the first check at once). */
  start(): this {
    this.#run();
    return this;
  }

  state(): CheckState {
    return this.#state;
  }

  settled(maxWaitMs: number): Promise<void> {
    if (this.#state.kind !== 'pending' || this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        cancel();
        this.#waiters.delete(done);
        resolve();
      };
      const cancel = this.#clock.setTimeout(done, maxWaitMs);
      this.#waiters.add(done);
    });
  }

  #run(): void {
    if (this.#stopped) return;
    const startedAt = this.#clock.now();
    const client = this.#opts.client;
    const check = checkHealth(typeof client === 'function' ? client() : client, this.#opts.service, this.#opts.timeoutMs);
    this.#cancel = check.cancel;
    void check.answer.then((answer) => {
      this.#cancel = undefined;
      if (this.#stopped) return;
      this.#record(answer);
      const wait = Math.max(0, this.#opts.intervalMs - (this.#clock.now() - startedAt));
      this.#cancelTimer = this.#clock.setTimeout(() => this.#run(), wait);
    });
  }

  #record(answer: HealthAnswer): void {
    const verdict = judgeAnswer(answer);
    const before = this.#state.kind;
    if (verdict.ok) {
      this.counts.ok++;
      this.#failures = 0;
      this.#state = { kind: 'ok' };
    } else {
      this.counts.failed++;
      if (this.#failures++ === 0) this.#firstFailure = this.#clock.now();
      const threshold = this.#opts.unhealthyThreshold ?? DEFAULT_UNHEALTHY_THRESHOLD;
      if (before !== 'ok' || this.#failures >= threshold) {
        this.#state = { kind: 'failing', reason: `${this.name}: ${verdict.why}`, since: this.#firstFailure };
      }
    }
    if (this.#state.kind !== before) this.#opts.onChange?.(this.#state);
    if (before === 'pending') for (const w of [...this.#waiters]) w();
  }

  /** Stops checking (and closes the client it owns). */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#cancel?.();
    for (const w of [...this.#waiters]) w();
    const client = this.#opts.client;
    if (this.#opts.ownsClient !== false && typeof client !== 'function') client.close();
  }
}
