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
 * The response phase (`response-phase.ts`) runs once per client request on the response the client will get:
 * the upstream's final head (through the one hook the router awaits, `ctx.responseHeadTransform`, after ext_proc's
 * own transform when it set one), or a local reply before the chain writes it. It is skipped altogether when no
 * filter has `onResponse`.
 *
 * Each request keeps the `FilterSet` it started with; `replaceUserFilters` (a reload) swaps in a new one for the
 * requests that start afterwards.
 *
 * The chain is written with callbacks rather than async/await: a request whose filters all answer synchronously
 * (a cache hit) allocates no promise on its way to the router; only a filter that returns a promise pays for one.
 */
import { STALE_HEADER, STALE_STATUS } from '../../lib/wire-contract.js';
import type { Filter, FilterResult, LocalReply, RerunReason, UpstreamOutcome } from '../api/filter.js';
import { CHAIN_DONE, type ChainDone, type ProxyRequest } from '../request/context.js';
import type { ResponseHeadDecision, ResponseHeadTransform, StageContext } from '../request/stage-context.js';
import type { Router } from '../upstream/router.js';
import type { Counters } from '../ops/stats.js';
import { ERRORS, ProxyError, errorReply, type ProxyErrorSpec } from './errors.js';
import { sendLocalReply } from '../edge/local-reply.js';
import { DEFAULT_RERUN_POLICY, shouldRerun, type RerunPolicy } from './rerun.js';
import { FilterSet } from './filter-set.js';
import { DEFAULT_FILTER_TIMEOUT_MS, withFilterTimeout } from './filter-timeout.js';
import { ChainResponse, runResponsePhase } from './response-phase.js';
import { isPromise } from './promise.js';

/** The re-run policy (any field left out takes its flag's default), the filter timeout, and how many filters are user filters. */
export type ChainOptions = Partial<RerunPolicy> & {
  /** `--filter-timeout-ms` (default 10 s). */
  readonly filterTimeoutMs?: number;
  /** The first N filters are user filters (default: all of them). */
  readonly userFilters?: number;
};

export class Chain {
  #set: FilterSet;
  readonly #onOutcome: (ctx: ProxyRequest, outcome: UpstreamOutcome) => void;
  readonly #policy: RerunPolicy;

  constructor(
    /** User filters (plain `Filter`s) and the built-in stages' filters (which use their typed slots). */
    filters: readonly Filter<StageContext>[],
    readonly router: Router,
    private readonly counters: Counters,
    opts: ChainOptions = {},
  ) {
    const { filterTimeoutMs, userFilters, ...policy } = opts;
    this.#policy = Object.freeze({ ...DEFAULT_RERUN_POLICY, ...policy });
    if (typeof (router as Partial<Router>).forward !== 'function') throw new Error('the chain must end with a router');
    this.#set = new FilterSet(filters, userFilters ?? filters.length, 0, filterTimeoutMs ?? DEFAULT_FILTER_TIMEOUT_MS);
    this.#onOutcome = (ctx, outcome) => {
      try {
        this.#upstreamPhase(ctx, outcome);
      } catch (err) {
        this.#internalError(ctx, err);
      }
    };
  }

  /** The filters new requests run through. */
  get filters(): readonly Filter<StageContext>[] {
    return this.#set.filters;
  }

  /** The current generation of filters (0 at start, +1 per reload). */
  get filterSet(): FilterSet {
    return this.#set;
  }

  /**
   * Swaps in new user filters (a reload), atomically: requests that start from now on run through them; requests
   * in flight finish on the filters they started with. The built-in stages are kept as they are.
   */
  replaceUserFilters(user: readonly Filter[], timeoutMs = this.#set.timeoutMs): FilterSet {
    this.#set = this.#set.withUserFilters(user as readonly Filter<StageContext>[], timeoutMs);
    return this.#set;
  }

  /** Runs one client request through the chain; `done(ctx)` is called once the response is decided. Never throws. */
  run(ctx: ProxyRequest, done: ChainDone): void {
    ctx.chainState = { kind: 'running', done };
    ctx.filterSet = this.#set;
    try {
      this.#requestPhase(ctx, 0);
    } catch (err) {
      this.#internalError(ctx, err);
    }
  }

  /** Something the proxy did not expect threw: fail this request with a 500, never the process (no response phase). */
  #internalError(ctx: ProxyRequest, err: unknown): void {
    ctx.log.error({ err }, 'request failed inside the proxy');
    ctx.error = ERRORS.INTERNAL;
    sendLocalReply(ctx, errorReply(ERRORS.INTERNAL, (err as Error)?.message));
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
    const set = ctx.filterSet as FilterSet;
    const filters = set.filters;
    for (let i = from; i < filters.length; i++) {
      const f = filters[i] as Filter<StageContext>;
      if (f.onRequest === undefined) continue;
      let result: FilterResult | Promise<FilterResult>;
      try {
        result = f.onRequest(ctx);
      } catch (err) {
        return this.#filterFailed(ctx, f, i, err);
      }
      if (isPromise(result)) {
        const pending = i < set.userFilters ? withFilterTimeout(ctx, f.name, 'onRequest', result, set.timeoutMs) : result;
        pending.then(
          (r) => {
            try {
              this.#afterFilter(ctx, i, r);
            } catch (err) {
              this.#internalError(ctx, err);
            }
          },
          (err: unknown) => this.#filterFailed(ctx, f, i, err),
        );
        return;
      }
      if (result.kind === 'reply') return this.#reply(ctx, result.reply, i, undefined);
    }
    this.#forward(ctx);
  }

  #afterFilter(ctx: ProxyRequest, index: number, result: FilterResult): void {
    if (result.kind === 'reply') return this.#reply(ctx, result.reply, index, undefined);
    this.#requestPhase(ctx, index + 1);
  }

  /**
   * Answers with a local reply — after the response phase of the filters before index `upto` (those whose request
   * phase ran), when any has one — and ends the chain's part of the request.
   */
  #reply(ctx: ProxyRequest, reply: LocalReply, upto: number, errorCode: string | undefined): void {
    const set = ctx.filterSet as FilterSet;
    if (!set.respondsBefore(upto) || ctx.responseState !== 'unsent' || ctx.downstreamClosed) {
      sendLocalReply(ctx, reply);
      return this.#done(ctx);
    }
    const response = runResponsePhase(ctx, set, upto - 1, ChainResponse.local(reply, errorCode));
    if (!isPromise(response)) {
      sendLocalReply(ctx, response.toLocalReply());
      return this.#done(ctx);
    }
    response.then(
      (r) => {
        sendLocalReply(ctx, r.toLocalReply());
        this.#done(ctx);
      },
      (err: unknown) => this.#internalError(ctx, err),
    );
  }

  /** Answers with a catalog error (through the response phase of the filters before `upto`). */
  #error(ctx: ProxyRequest, spec: ProxyErrorSpec, details: string | undefined, upto: number): void {
    ctx.error = spec;
    this.#reply(ctx, errorReply(spec, details), upto, spec.code);
  }

  #forward(ctx: ProxyRequest): void {
    if (ctx.downstreamClosed) {
      ctx.error = ERRORS.DOWNSTREAM_CLOSED;
      return this.#done(ctx);
    }
    const set = ctx.filterSet as FilterSet;
    const all = set.filters.length;
    if (ctx.route === undefined) return this.#error(ctx, ERRORS.NO_ROUTE, 'no route after the request phase', all);
    if (set.respondsBefore(all)) ctx.responseHeadTransform = this.#responsePhaseHook(ctx, set, ctx.responseHeadTransform);
    try {
      this.router.forward(ctx, this.#onOutcome);
    } catch (err) {
      if (!(err instanceof ProxyError)) throw err;
      this.#error(ctx, err.spec, err.details, all);
    }
  }

  /**
   * The upstream response's way through the response phase: the hook the router awaits before writing the head.
   * A stage's own transform (ext_proc's response headers) runs first: it is the last filter, so the first in reverse.
   */
  #responsePhaseHook(ctx: ProxyRequest, set: FilterSet, stage: ResponseHeadTransform | undefined): ResponseHeadTransform {
    const from = set.filters.length - 1;
    const phase = (response: ChainResponse): ResponseHeadDecision | Promise<ResponseHeadDecision> => {
      const out = runResponsePhase(ctx, set, from, response);
      return isPromise(out) ? out.then((r) => r.decision()) : out.decision();
    };
    if (stage === undefined) return (head) => phase(ChainResponse.upstream(head));
    return async (head) => {
      let decision: ResponseHeadDecision;
      try {
        decision = await stage(head);
      } catch (err) {
        decision = { kind: 'reply', reply: errorReply(ERRORS.INTERNAL, `response head transform failed: ${(err as Error)?.message}`) };
      }
      return phase(decision.kind === 'continue' ? ChainResponse.upstream(decision.head) : ChainResponse.local(decision.reply, ctx.error?.code));
    };
  }

  /** Upstream phase: observe only, in reverse order; then relay, fail, or re-run. */
  #upstreamPhase(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
    const reversed = (ctx.filterSet as FilterSet).reversed;
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
        return this.#error(ctx, decision.error, details, (ctx.filterSet as FilterSet).filters.length);
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
    for (const f of (ctx.filterSet as FilterSet).filters) {
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

  /** A filter at `index` threw or rejected in its request phase: fail its own request (the filters before it may brand the error). */
  #filterFailed(ctx: ProxyRequest, f: Filter<StageContext>, index: number, err: unknown): void {
    if (err instanceof ProxyError) return this.#error(ctx, err.spec, `${f.name}: ${err.details ?? err.message}`, index);
    ctx.log.error({ err, filter: f.name }, 'filter failed');
    this.#error(ctx, ERRORS.FILTER_FAILED, `filter ${f.name} threw: ${(err as Error)?.message ?? String(err)}`, index);
  }

  /** Always called once per client request, when its response is finished or abandoned. */
  done(ctx: ProxyRequest, status: number, error: Error | undefined): void {
    const result = error === undefined ? { status } : { status, error };
    for (const f of (ctx.filterSet ?? this.#set).filters) {
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
