/**
 * The filters' worker pool (`--filter-workers`, piscina): runs the `offload` export of a filter module off the event
 * loop. The main loop hands a worker a copy of what the evaluation needs (the input the filter's main-loop part
 * prepared, its buffers moved by transfer) and applies the result only if the request still waits for it: its
 * client has not left, its filter has not timed out (both abort the request's filter signal), and no later
 * offloaded call of the same request was made (a per-call sequence number). Anything else is counted stale and
 * dropped. The signal goes to piscina too: a waiting call of a gone request leaves the queue, and a running one
 * has its thread terminated (and replaced), so a client that leaves stops the work it caused.
 *
 * The queue is bounded (`--filter-backlog`): a call that finds it full runs inline on the event loop, as it would
 * with no pool, and is counted — nothing is dropped and nothing waits unbounded. With 0 workers there is no pool and
 * every call runs inline, directly: the same function on the same input, the same decision and the same errors.
 * A call that throws, or whose thread dies, rejects for its own request only; piscina starts a new thread.
 * With `--workers N` each process builds its own pool. piscina itself is loaded only by a pool with workers.
 */
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import type { RequestContext } from '../../api/filter.js';
import type { OffloadDecision, OffloadFunction, OffloadOptions, Offloader } from '../../api/offload.js';
import { ERRORS, ProxyError } from '../../http/errors.js';
import type { OffloadConfig } from './config.js';
import { offloadTallies, type OffloadPath, type OffloadPoolView } from './offload-stats.js';
import type { OffloadTask } from './offload-worker.js';

const WORKER_FILE = fileURLToPath(new URL('./offload-worker.js', import.meta.url));

/** piscina's rejections when its queue is full (plain errors: matched by message). */
function isQueueFull(err: unknown): boolean {
  return err instanceof Error && (err.message === 'Task queue is at limit' || err.message.startsWith('No task queue available'));
}

/** Each request's latest offloaded call: a result of an earlier one is stale. */
const latest = new WeakMap<RequestContext, number>();
let sequence = 0;

export class OffloadPool implements OffloadPoolView {
  readonly tallies = offloadTallies();
  readonly #piscina: Piscina<OffloadTask, OffloadDecision> | undefined;

  /** The pool `config` asks for, its threads started (none with 0 workers). */
  static async start(config: OffloadConfig): Promise<OffloadPool> {
    if (config.workers === 0) return new OffloadPool(config, undefined);
    // Loaded here, not at the top: a process without filter workers never pays piscina's load (≈ 30 ms of CPU).
    const { Piscina } = await import('piscina');
    const options = { filename: WORKER_FILE, minThreads: config.workers, maxThreads: config.workers, maxQueue: config.backlog };
    return new OffloadPool(config, new Piscina<OffloadTask, OffloadDecision>(options));
  }

  /** No pool: every call runs inline (what a filter loaded without the proxy's pool, e.g. in a unit test, gets). */
  static inline(): OffloadPool {
    return new OffloadPool(Object.freeze({ workers: 0, backlog: 1 }), undefined);
  }

  private constructor(
    readonly config: OffloadConfig,
    piscina: Piscina<OffloadTask, OffloadDecision> | undefined,
  ) {
    this.#piscina = piscina;
  }

  get workers(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  get backlog(): number {
    return this.#piscina?.queueSize ?? 0;
  }

  /** The `FilterContext.offload` of the module loaded from `url` (its reload URL included), whose export is `fn`. */
  offloader(url: string, fn: OffloadFunction): Offloader {
    return (ctx, input, options) => this.#call(url, fn, ctx, input, options);
  }

  async #call(url: string, fn: OffloadFunction, ctx: RequestContext, input: unknown, options: OffloadOptions | undefined): Promise<OffloadDecision> {
    const seq = ++sequence;
    latest.set(ctx, seq);
    const signal = ctx.signal;
    const started = performance.now();
    const pool = this.#piscina;
    let path: OffloadPath = pool !== undefined && pool.queueSize < this.config.backlog ? 'pool' : 'inline';
    let decision: OffloadDecision;
    try {
      if (path === 'inline' || pool === undefined) decision = await fn(input);
      else {
        try {
          decision = await pool.run({ url, input }, { transferList: options?.transfer as ArrayBuffer[] | undefined, signal: signal ?? null });
        } catch (err) {
          if (!isQueueFull(err)) throw err;
          path = 'inline';
          decision = await fn(input);
        }
      }
    } catch (err) {
      this.#settled(path, started);
      if (!waiting(ctx, seq)) throw this.#stale(ctx, seq);
      this.tallies.errors++;
      throw err;
    }
    this.#settled(path, started);
    if (!waiting(ctx, seq)) throw this.#stale(ctx, seq);
    return decision;
  }

  #settled(path: OffloadPath, started: number): void {
    this.tallies.calls[path]++;
    this.tallies.observeLatency(path, (performance.now() - started) / 1000);
  }

  /** Counts a result nobody waits for, and what the (already answered or abandoned) call rejects with. */
  #stale(ctx: RequestContext, seq: number): Error {
    this.tallies.stale++;
    if (latest.get(ctx) !== seq) return new Error('a later offloaded call of the same request replaced this one');
    return new ProxyError(ERRORS.DOWNSTREAM_CLOSED, 'the request no longer waits for its offloaded result');
  }

  /** Ends the worker threads (calls still running reject). */
  async close(): Promise<void> {
    await this.#piscina?.destroy();
  }
}

/** The request still waits for call `seq`: not aborted (client gone, filter timed out), and no later call made. */
function waiting(ctx: RequestContext, seq: number): boolean {
  return ctx.signal?.aborted !== true && latest.get(ctx) === seq;
}

/** The one inline pool a filter loaded without the proxy's pool gets. */
export const INLINE_OFFLOAD = OffloadPool.inline();
