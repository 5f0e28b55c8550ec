/**
 * The overload manager: samples the resource monitors (`sampler.ts`) on a timer (every 250 ms, unref'd, as Envoy's
 * refresh interval), steps the state machine (`levels.ts`), and is what the actions consult:
 * - `shedMiss()` (the stage in front of the resolver): at `shed-misses` and above, a request that would take the
 *   slow path is answered 503 `PROXY_ERR_OVERLOADED` with `Retry-After`, while hits keep flowing;
 * - `refuseConnection()` (the listeners): at `shed-misses` and above, a new client connection is closed at once;
 * - `shedRequest()` (the ingress): at `shed-all`, every new request is answered 503 and its connection closed after it;
 * - as a readiness check, `/ready` answers 503 while the level is above `normal`, so a balancer moves traffic away.
 * Each action counts what it refused (`tallies.ts`). Tests inject the sampler and step it with `sample()`.
 */
import v8 from 'node:v8';
import type { Logger } from 'pino';
import type { CheckState, ReadinessCheck } from '../../../lib/health-probe.js';
import { anyTrigger, DEFAULT_HYSTERESIS, LEVEL_NAMES, nextState, NORMAL, type Cause, type Hysteresis, type LevelName, type OverloadLevel, type OverloadState, type Readings, type Triggers } from './levels.js';
import { processSampler, type Sampler } from './sampler.js';
import type { OverloadTallies } from './tallies.js';

/** What the actions read: the current level. */
export interface OverloadSignal {
  readonly level: OverloadLevel;
}

/** Envoy's overload manager refresh interval. */
export const DEFAULT_SAMPLE_INTERVAL_MS = 250;

export interface OverloadManagerOptions {
  readonly triggers: Triggers;
  readonly tallies: OverloadTallies;
  /** The monitors' readings (default: this process's, `processSampler`). */
  readonly sampler?: Sampler;
  readonly intervalMs?: number;
  readonly hysteresis?: Hysteresis;
  readonly log?: Logger;
}

const MONITOR_TEXT: Readonly<Record<keyof Readings, { readonly label: string; readonly format: (n: number) => string }>> = {
  loopDelayMs: { label: 'event-loop delay', format: (n) => `${n.toFixed(1)} ms` },
  heapUsedBytes: { label: 'heap used', format: (n) => `${(n / 2 ** 20).toFixed(1)} MiB` },
};

/** `heap used 300.0 MiB >= 256.0 MiB`. */
export function describeCause(cause: Cause): string {
  const { label, format } = MONITOR_TEXT[cause.monitor];
  return `${label} ${format(cause.reading)} >= ${format(cause.threshold)}`;
}

export class OverloadManager implements OverloadSignal, ReadinessCheck {
  readonly name = 'overload';
  readonly triggers: Triggers;
  readonly tallies: OverloadTallies;
  readonly enabled: boolean;
  readonly #sampler: Sampler;
  readonly #close: () => void;
  readonly #intervalMs: number;
  readonly #hysteresis: Hysteresis;
  readonly #log: Logger | undefined;
  #state: OverloadState = NORMAL;
  #readings: Readings = { loopDelayMs: 0, heapUsedBytes: 0 };
  /** Epoch ms at which the level last left `normal`. */
  #since = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: OverloadManagerOptions) {
    this.triggers = opts.triggers;
    this.tallies = opts.tallies;
    this.enabled = anyTrigger(opts.triggers);
    if (opts.sampler !== undefined) {
      this.#sampler = opts.sampler;
      this.#close = () => undefined;
    } else {
      const own = this.enabled ? processSampler(opts.triggers) : undefined;
      this.#sampler = own?.sample ?? (() => this.#readings);
      this.#close = () => own?.close();
    }
    this.#intervalMs = opts.intervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
    this.#hysteresis = opts.hysteresis ?? DEFAULT_HYSTERESIS;
    this.#log = opts.log;
  }

  /** Starts sampling (nothing at all when every trigger is off). */
  start(): this {
    if (!this.enabled || this.#timer !== undefined) return this;
    const limit = v8.getHeapStatistics().heap_size_limit;
    const heap = this.triggers.heapUsedBytes;
    for (const [flag, bytes] of [['--overload-heap-bytes', heap.shedMisses], ['--overload-heap-critical-bytes', heap.shedAll]] as const) {
      if (bytes >= limit) this.#log?.warn({ flag, bytes, heapSizeLimit: limit }, `${flag} is not below V8's heap limit: the process runs out of heap before it sheds (raise --max-old-space-size, or lower the threshold)`);
    }
    this.#timer = setInterval(() => this.sample(), this.#intervalMs);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#close();
  }

  /** Reads the monitors once and steps the state (the timer calls it; tests call it directly). */
  sample(): OverloadState {
    this.#readings = this.#sampler();
    const before = this.#state;
    const after = nextState(before, this.#readings, this.triggers, this.#hysteresis);
    this.#state = after;
    if (after.level !== before.level) this.#changed(before.level, after);
    return after;
  }

  #changed(from: OverloadLevel, to: OverloadState): void {
    const name = LEVEL_NAMES[to.level];
    this.tallies.transitions[name]++;
    if (from === 0) this.#since = Date.now();
    const fields = { from: LEVEL_NAMES[from], to: name, ...this.#readings };
    if (to.level > from) this.#log?.warn({ ...fields, cause: to.cause === undefined ? undefined : describeCause(to.cause) }, `overloaded: ${name}`);
    else this.#log?.info(fields, to.level === 0 ? 'overload over' : `overload easing: ${name}`);
  }

  get level(): OverloadLevel {
    return this.#state.level;
  }

  get levelName(): LevelName {
    return LEVEL_NAMES[this.#state.level];
  }

  /** The last readings (zero for a monitor that is off). */
  get readings(): Readings {
    return this.#readings;
  }

  /** At `shed-misses` and above: counts the miss shed, and says why (the access log's details); undefined: serve it. */
  shedMiss(): string | undefined {
    if (this.#state.level < 1) return undefined;
    this.tallies.shed.overloadMiss++;
    return this.#reason();
  }

  /** At `shed-all`: counts the request shed, and says why (the access log's details); undefined: serve it. */
  shedRequest(): string | undefined {
    if (this.#state.level < 2) return undefined;
    this.tallies.shed.overloadAll++;
    return this.#reason();
  }

  /** At `shed-misses` and above: counts the connection refused, and says so. */
  refuseConnection(): boolean {
    if (this.#state.level < 1) return false;
    this.tallies.connectionsRefused.overload++;
    return true;
  }

  #reason(): string {
    const cause = this.#state.cause;
    return `overloaded: ${this.levelName}${cause === undefined ? '' : ` (${describeCause(cause)})`}`;
  }

  /** The readiness check: failing while the level is above `normal`. */
  state(): CheckState {
    return this.#state.level === 0 ? { kind: 'ok' } : { kind: 'failing', reason: this.#reason(), since: this.#since };
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }
}
