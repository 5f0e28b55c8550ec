/**
 * The filter chain: user filters, then the built-in stages (actor-cache when on, then ext-proc or the apiserver
 * resolver), then the router — which is not a filter, so "router last" cannot be got wrong.
 *
 * The chain is the single owner of the same-request re-run loop. When the router reports a stale rejection, a
 * connect failure or a reset, `shouldRerun` decides; on a re-run (at once, or after the backoff it names) every
 * filter's `onRerun` is called (actor-cache evicts there), the route and the attempt's header changes are
 * cleared, and the whole chain runs again from the top for the same client request (Envoy's recreateStream).
 * A client that leaves during a backoff ends the request as cancelled, without the re-run. Filters never loop on
 * their own.
 *
 * The chain is written with callbacks rather than async/await: a request whose filters all answer synchronously
 * (a cache hit) allocates no promise on its way to the router; only a filter that returns a promise pays for one.
 */
import { STALE_HEADER, STALE_STATUS } from '../../lib/wire-contract.js';
import type { Filter, FilterResult, RerunReason, UpstreamOutcome } from '../api/filter.js';
import { CHAIN_DONE, type ChainDone, type ProxyRequest } from '../request/context.js';
import type { StageContext } from '../request/stage-context.js';
import type { Router } from '../upstream/router.js';
import type { Counters } from '../ops/stats.js';
import { ERRORS, ProxyError } from './errors.js';
import { sendError, sendLocalReply } from '../edge/local-reply.js';
import { DEFAULT_RERUN_POLICY, shouldRerun, type RerunPolicy } from './rerun.js';

/** The re-run policy (any field left out takes its flag's default). */
export type ChainOptions = Partial<RerunPolicy>;

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

export class Chain {
  readonly #reversed: readonly Filter<StageContext>[];
  readonly #onOutcome: (ctx: ProxyRequest, outcome: UpstreamOutcome) => void;
  readonly #policy: RerunPolicy;

  constructor(
    /** User filters (plain `Filter`s) and the built-in stages' filters (which use their typed slots). */
    readonly filters: readonly Filter<StageContext>[],
    readonly router: Router,
    private readonly counters: Counters,
    opts: ChainOptions = {},
  ) {
    this.#policy = Object.freeze({ ...DEFAULT_RERUN_POLICY, ...opts });
    if (typeof (router as Partial<Router>).forward !== 'function') throw new Error('the chain must end with a router');
    for (const f of filters) {
      if (typeof f?.name !== 'string' || f.name === '') throw new Error('every filter needs a name');
    }
    this.#reversed = [...filters].reverse();
    this.#onOutcome = (ctx, outcome) => {
      try {
        this.#upstreamPhase(ctx, outcome);
      } catch (err) {
        this.#internalError(ctx, err);
      }
    };
  }

  /** Runs one client request through the chain; `done(ctx)` is called once the response is decided. Never throws. */
  run(ctx: ProxyRequest, done: ChainDone): void {
    ctx.chainState = { kind: 'running', done };
    try {
      this.#requestPhase(ctx, 0);
    } catch (err) {
      this.#internalError(ctx, err);
    }
  }

  /** Something the proxy did not expect threw: fail this request with a 500, never the process. */
  #internalError(ctx: ProxyRequest, err: unknown): void {
    ctx.log.error({ err }, 'request failed inside the proxy');
    sendError(ctx, ERRORS.INTERNAL, (err as Error)?.message);
    this.#done(ctx);
  }

  #done(ctx: ProxyRequest): void {
    const state = ctx.chainState;
    if (state.kind !== 'running') return;
    ctx.chainState = CHAIN_DONE;
    state.done(ctx);
  }

  /** Request phase: filters in order from `from`; any may answer locally; then the router. */
  #requestPhase(ctx: ProxyRequest, from: number): void {
    const filters = this.filters;
    for (let i = from; i < filters.length; i++) {
      const f = filters[i] as Filter<StageContext>;
      if (f.onRequest === undefined) continue;
      let result: FilterResult | Promise<FilterResult>;
      try {
        result = f.onRequest(ctx);
      } catch (err) {
        this.#filterFailed(ctx, f, err);
        return this.#done(ctx);
      }
      if (isPromise(result)) {
        result.then(
          (r) => {
            try {
              this.#afterFilter(ctx, i, r);
            } catch (err) {
              this.#internalError(ctx, err);
            }
          },
          (err: unknown) => {
            this.#filterFailed(ctx, f, err);
            this.#done(ctx);
          },
        );
        return;
      }
      if (result.kind === 'reply') {
        sendLocalReply(ctx, result.reply);
        return this.#done(ctx);
      }
    }
    this.#forward(ctx);
  }

  #afterFilter(ctx: ProxyRequest, index: number, result: FilterResult): void {
    if (result.kind === 'reply') {
      sendLocalReply(ctx, result.reply);
      return this.#done(ctx);
    }
    this.#requestPhase(ctx, index + 1);
  }

  #forward(ctx: ProxyRequest): void {
    if (ctx.downstreamClosed) {
      ctx.error = ERRORS.DOWNSTREAM_CLOSED;
      return this.#done(ctx);
    }
    if (ctx.route === undefined) {
      sendError(ctx, ERRORS.NO_ROUTE, 'no route after the request phase');
      return this.#done(ctx);
    }
    try {
      this.router.forward(ctx, this.#onOutcome);
    } catch (err) {
      if (!(err instanceof ProxyError)) throw err;
      sendError(ctx, err.spec, err.details);
      this.#done(ctx);
    }
  }

  /** Upstream phase: observe only, in reverse order; then relay, fail, or re-run. */
  #upstreamPhase(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
    const reversed = this.#reversed;
    for (let i = 0; i < reversed.length; i++) {
      const f = reversed[i] as Filter<StageContext>;
      if (f.onUpstreamResponse === undefined) continue;
      try {
        f.onUpstreamResponse(ctx, outcome);
      } catch (err) {
        ctx.log.error({ err, filter: f.name }, 'filter failed observing the upstream response');
      }
    }
    if (outcome.kind === 'response') return this.#done(ctx);
    const decision = shouldRerun({
      outcome,
      attempt: ctx.attempt,
      policy: this.#policy,
      elapsedMs: performance.now() - ctx.startedAt,
      jitter: Math.random(),
      method: ctx.method,
      bodyReplayable: ctx.body === null || ctx.body.replayable,
      responseStarted: ctx.responseState !== 'unsent',
      downstreamClosed: ctx.downstreamClosed,
    });
    if (decision.kind === 'rerun') {
      if (decision.delayMs > 0) return this.#backoff(ctx, decision.reason, decision.delayMs);
      this.#rerun(ctx, decision.reason);
      return this.#requestPhase(ctx, 0);
    }
    if (decision.kind === 'fail') {
      if (decision.error === ERRORS.DOWNSTREAM_CLOSED) ctx.error = decision.error;
      else {
        let details = describe(outcome);
        if (decision.limit === 'budget') {
          this.counters.rerunBudgetExhausted++;
          details += `; re-run budget of ${this.#policy.budgetMs} ms spent after ${ctx.attempt} re-run(s)`;
        }
        sendError(ctx, decision.error, details);
      }
    }
    this.#done(ctx);
  }

  /** Waits `delayMs`, then re-runs; a client that leaves meanwhile ends the request as cancelled instead. */
  #backoff(ctx: ProxyRequest, reason: RerunReason, delayMs: number): void {
    this.counters.rerunBackoffs++;
    const signal = ctx.signal;
    const onAbort = (): void => {
      clearTimeout(timer);
      this.counters.rerunBackoffsCancelled++;
      ctx.error = ERRORS.DOWNSTREAM_CLOSED;
      ctx.details = `the client went away during the ${delayMs} ms wait before re-run ${ctx.attempt + 1}`;
      this.#done(ctx);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      try {
        if (ctx.downstreamClosed) return onAbort();
        this.#rerun(ctx, reason);
        this.#requestPhase(ctx, 0);
      } catch (err) {
        this.#internalError(ctx, err);
      }
    }, delayMs);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
  }

  #rerun(ctx: ProxyRequest, reason: RerunReason): void {
    if (reason === 'stale') this.counters.rerunsStale++;
    else if (reason === 'connect') this.counters.rerunsConnect++;
    else this.counters.rerunsReset++;
    this.counters.rerunsByAttempt[ctx.attempt + 1]!++;
    for (const f of this.filters) {
      if (f.onRerun === undefined) continue;
      try {
        f.onRerun(ctx, reason);
      } catch (err) {
        ctx.log.error({ err, filter: f.name }, 'filter failed preparing a re-run');
      }
    }
    ctx.log.debug({ reason, attempt: ctx.attempt + 1, upstream: ctx.upstreamAddress }, 're-running the request');
    ctx.nextAttempt();
  }

  #filterFailed(ctx: ProxyRequest, f: Filter<StageContext>, err: unknown): void {
    if (err instanceof ProxyError) {
      sendError(ctx, err.spec, `${f.name}: ${err.details ?? err.message}`);
      return;
    }
    ctx.log.error({ err, filter: f.name }, 'filter failed');
    sendError(ctx, ERRORS.FILTER_FAILED, `filter ${f.name} threw: ${(err as Error)?.message ?? String(err)}`);
  }

  /** Always called once per client request, when its response is finished or abandoned. */
  done(ctx: ProxyRequest, status: number, error: Error | undefined): void {
    const result = error === undefined ? { status } : { status, error };
    for (const f of this.filters) {
      if (f.onDone === undefined) continue;
      try {
        f.onDone(ctx, result);
      } catch (err) {
        ctx.log.error({ err, filter: f.name }, 'filter failed in onDone');
      }
    }
  }
}

function describe(outcome: UpstreamOutcome): string {
  switch (outcome.kind) {
    case 'stale':
      return `upstream answered ${STALE_STATUS} ${STALE_HEADER}`;
    case 'connect-failed':
      return `upstream connect failed: ${outcome.code}`;
    case 'reset':
      return `upstream reset (${outcome.code})${outcome.requestWritten ? ' after the request was written' : ''}`;
    case 'timeout':
      return 'no upstream response headers within the route timeout';
    case 'invalid-request':
      return `the upstream request could not be built: ${outcome.code}`;
    case 'identity-rejected':
      return `upstream identity rejected (${outcome.reason}); presented ${outcome.presented}`;
    default:
      return outcome.kind;
  }
}
