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
 * The chain also decides what the client gets: the router hands over the upstream's answer with its body paused;
 * the response phase (`response-phase.ts`: every filter's `onResponse`, in reverse order — ext_proc's response
 * headers exchange is that stage's own hook) runs on it, or on a local reply, before anything is written; then
 * the response writer (`response-writer.ts`) writes the head and pumps the body into the downstream exchange. The
 * phase is skipped altogether when no filter has `onResponse`. Nothing is re-run after the first byte.
 *
 * Each request keeps the `FilterSet` it started with; `replaceUserFilters` (a reload) swaps in a new one for the
 * requests that start afterwards.
 *
 * The chain is written with callbacks rather than async/await: a request whose filters all answer synchronously
 * (a cache hit) allocates no promise on its way to the router and back; only a filter that returns a promise pays
 * for one.
 */
import { STALE_HEADER, STALE_STATUS } from '../../lib/wire-contract.js';
import type { Filter, FilterResult, RerunReason, UpstreamOutcome } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';
import { RequestSlot } from '../request/slots.js';
import type { Router } from '../upstream/router.js';
import type { UpstreamAttemptResult, UpstreamResponse } from '../upstream/response.js';
import { ResponseOutcome } from '../upstream/outcome.js';
import type { Counters } from '../ops/stats.js';
import { ERRORS, ProxyError, errorReply, type ProxyErrorSpec } from '../http/errors.js';
import { discardReplyBody, type MultiValueLocalReply } from '../http/local-reply.js';
import { DEFAULT_RERUN_POLICY, shouldRerun, type RerunPolicy } from './rerun.js';
import { FilterSet, type ChainFilter } from './filter-set.js';
import { DEFAULT_FILTER_TIMEOUT_MS, withFilterTimeout } from './filter-timeout.js';
import { ChainResponse } from './chain-response.js';
import { runResponsePhase } from './response-phase.js';
import { filterResultProblem } from './filter-result.js';
import { ResponseWriter, type TunnelDeps } from './response-writer.js';
import { isPromise } from './promise.js';
import { filterSpan } from './filter-span.js';
import { endSpan } from '../request/trace.js';

/** Called once per request when the chain is done with it (the response is being written, or was answered). */
export type ChainDone = (ctx: ProxyRequest) => void;

/** The chain's state for one request: the filters it runs through (from start to end) and whom to tell when done. */
interface ChainRun {
  readonly set: FilterSet;
  done: ChainDone | undefined;
}

const RUN = new RequestSlot<ChainRun>('chain');

/** The re-run policy (any field left out takes its flag's default), the filter timeout, and how many filters are user filters. */
export type ChainOptions = Partial<RerunPolicy> & {
  /** `--filter-timeout-ms` (default 10 s). */
  readonly filterTimeoutMs?: number;
  /** The first N filters are user filters (default: all of them). */
  readonly userFilters?: number;
  /** Where upgraded connections go once a worker answered 101 (without it, a 101 is refused). */
  readonly tunnels?: TunnelDeps;
};

export class Chain {
  #set: FilterSet;
  readonly #onOutcome: (ctx: ProxyRequest, outcome: UpstreamAttemptResult) => void;
  readonly #policy: RerunPolicy;
  readonly #writer: ResponseWriter;

  constructor(
    /** User filters (plain `Filter`s) and the built-in stages' filters (which use their own slots). */
    filters: readonly ChainFilter[],
    readonly router: Router,
    private readonly counters: Counters,
    opts: ChainOptions = {},
  ) {
    const { filterTimeoutMs, userFilters, tunnels, ...policy } = opts;
    this.#policy = Object.freeze({ ...DEFAULT_RERUN_POLICY, ...policy });
    if (typeof (router as Partial<Router>).forward !== 'function') throw new Error('the chain must end with a router');
    this.#set = new FilterSet(filters, userFilters ?? filters.length, 0, filterTimeoutMs ?? DEFAULT_FILTER_TIMEOUT_MS);
    this.#writer = new ResponseWriter(tunnels);
    this.#onOutcome = (ctx, outcome) => {
      try {
        if (outcome.kind === 'response') this.#answered(ctx, outcome);
        else this.#upstreamPhase(ctx, outcome);
      } catch (err) {
        this.#internalError(ctx, err);
      }
    };
  }

  /** The filters new requests run through. */
  get filters(): readonly ChainFilter[] {
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
    this.#set = this.#set.withUserFilters(user as readonly ChainFilter[], timeoutMs);
    return this.#set;
  }

  /** Runs one client request through the chain; `done(ctx)` is called once the response is decided. Never throws. */
  run(ctx: ProxyRequest, done: ChainDone): void {
    ctx.phase = 'in-chain';
    RUN.set(ctx, { set: this.#set, done });
    try {
      this.#requestPhase(ctx, 0);
    } catch (err) {
      this.#internalError(ctx, err);
    }
  }

  /** The filters `ctx` runs through (the current ones for a request the chain never ran). */
  filterSetOf(ctx: ProxyRequest): FilterSet {
    return RUN.get(ctx)?.set ?? this.#set;
  }

  /** Something the proxy did not expect threw: fail this request with a 500, never the process (no response phase). */
  #internalError(ctx: ProxyRequest, err: unknown): void {
    if (ctx.contained) {
      // The containment boundary answers (500 or a reset), logs and counts it; the chain's part is over.
      ctx.internalError(ctx.site, err);
      this.#done(ctx);
      return;
    }
    ctx.log.error({ err }, 'request failed inside the proxy');
    ctx.error = ERRORS.INTERNAL;
    if (ctx.exchange.headSent) ctx.exchange.abortResponse();
    else this.#writer.local(ctx, errorReply(ERRORS.INTERNAL, (err as Error)?.message));
    this.#done(ctx);
  }

  #done(ctx: ProxyRequest): void {
    const run = RUN.get(ctx);
    const done = run?.done;
    if (run === undefined || done === undefined) return;
    run.done = undefined;
    ctx.phase = 'answered';
    done(ctx);
  }

  /** Request phase: filters in order from `from`; any may answer locally; then the router. */
  #requestPhase(ctx: ProxyRequest, from: number): void {
    const set = this.filterSetOf(ctx);
    const filters = set.filters;
    const trace = ctx.trace;
    for (let i = from; i < filters.length; i++) {
      const f = filters[i] as ChainFilter;
      if (f.onRequest === undefined) continue;
      // Tracing on: a span for each user filter's request phase (the built-in stages make their own).
      const span = trace !== undefined && i < set.userFilters ? filterSpan(trace, f.name) : undefined;
      let result: FilterResult | Promise<FilterResult>;
      try {
        result = f.onRequest(ctx);
      } catch (err) {
        if (span !== undefined) endSpan(span, 'exception');
        return this.#filterFailed(ctx, f, i, err);
      }
      if (isPromise(result)) {
        const pending = i < set.userFilters ? withFilterTimeout(ctx, f.name, 'onRequest', result, set.timeoutMs) : result;
        pending.then(
          (r) => {
            if (span !== undefined) endSpan(span, undefined, { 'actor_edge.filter.result': r?.kind ?? 'invalid' });
            try {
              this.#afterFilter(ctx, f, i, r);
            } catch (err) {
              this.#internalError(ctx, err);
            }
          },
          (err: unknown) => {
            if (span !== undefined) endSpan(span, err instanceof ProxyError ? err.spec.code : 'exception');
            this.#filterFailed(ctx, f, i, err);
          },
        );
        return;
      }
      if (span !== undefined) endSpan(span, undefined, { 'actor_edge.filter.result': result?.kind ?? 'invalid' });
      if (result?.kind !== 'continue') return this.#afterFilter(ctx, f, i, result);
    }
    this.#forward(ctx);
  }

  /** A filter's result: a reply, or on to the next filter; anything else is that filter failing. */
  #afterFilter(ctx: ProxyRequest, f: ChainFilter, index: number, result: FilterResult): void {
    const problem = filterResultProblem(result);
    if (problem !== undefined) return this.#filterFailed(ctx, f, index, new TypeError(`onRequest ${problem}`));
    if (result.kind === 'reply') return this.#reply(ctx, result.reply, index, undefined);
    this.#requestPhase(ctx, index + 1);
  }

  /**
   * Answers with a local reply — after the response phase of the filters before index `upto` (those whose request
   * phase ran), when any has one — and ends the chain's part of the request.
   */
  #reply(ctx: ProxyRequest, reply: MultiValueLocalReply, upto: number, errorCode: string | undefined): void {
    const set = this.filterSetOf(ctx);
    if (!set.respondsBefore(upto) || ctx.exchange.headSent || ctx.downstreamClosed) {
      this.#writer.local(ctx, reply);
      return this.#done(ctx);
    }
    const response = runResponsePhase(ctx, set, upto - 1, ChainResponse.local(reply, errorCode));
    if (!isPromise(response)) return this.#replyDecided(ctx, reply, response);
    response.then(
      (r) => this.#replyDecided(ctx, reply, r),
      (err: unknown) => {
        discardReplyBody(reply);
        this.#internalError(ctx, err);
      },
    );
  }

  /** Writes the reply the response phase left; a streamed body it replaced is cancelled. */
  #replyDecided(ctx: ProxyRequest, reply: MultiValueLocalReply, decided: ChainResponse): void {
    const final = decided.toLocalReply();
    if (final.body !== reply.body) discardReplyBody(reply);
    this.#writer.local(ctx, final);
    this.#done(ctx);
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
    const all = this.filterSetOf(ctx).filters.length;
    if (ctx.route === undefined) return this.#error(ctx, ERRORS.NO_ROUTE, 'no route after the request phase', all);
    try {
      this.router.forward(ctx, this.#onOutcome);
    } catch (err) {
      if (!(err instanceof ProxyError)) throw err;
      this.#error(ctx, err.spec, err.details, all);
    }
  }

  /**
   * The upstream answered: a tunnel opens (101), or the response phase decides on the head (when a filter has
   * one), then the head is written and the body piped; the filters observe what the client got.
   */
  #answered(ctx: ProxyRequest, response: UpstreamResponse): void {
    if (response.upgraded !== undefined) {
      const refused = this.#writer.tunnel(ctx, response);
      this.#observe(ctx, response);
      if (refused === undefined) return this.#done(ctx);
      return this.#error(ctx, refused, ctx.details ?? `worker answered ${response.status} but no tunnel could be opened`, this.filterSetOf(ctx).filters.length);
    }
    if (ctx.downstreamClosed) {
      response.body.abort('client closed the request');
      return this.#observed(ctx, response);
    }
    const refusal = ctx.exchange.refusesHead(response.status);
    if (refusal !== undefined) {
      response.body.abort('the worker answer cannot be relayed on this exchange');
      ctx.error = refusal;
      this.#writer.local(ctx, errorReply(refusal, `worker answered ${response.status} to an extended CONNECT handshake`));
      return this.#observed(ctx, new ResponseOutcome(refusal.status, []));
    }
    this.#writer.declareTrailer(ctx, response);
    const set = this.filterSetOf(ctx);
    if (!set.respondsBefore(set.filters.length)) {
      this.#writer.relay(ctx, response, response.status, response.headerList);
      return this.#observed(ctx, response);
    }
    const phase = runResponsePhase(ctx, set, set.filters.length - 1, ChainResponse.upstream(response.status, response.headerList));
    if (!isPromise(phase)) return this.#decided(ctx, response, phase);
    phase.then(
      (decided) => {
        try {
          this.#decided(ctx, response, decided);
        } catch (err) {
          this.#internalError(ctx, err);
        }
      },
      (err: unknown) => this.#internalError(ctx, err),
    );
  }

  /** The response phase decided: write the (changed) head, or the local reply that replaces the response. */
  #decided(ctx: ProxyRequest, response: UpstreamResponse, decided: ChainResponse): void {
    const failure = response.body.failure();
    if (failure !== undefined) return this.#upstreamPhase(ctx, failure); // the upstream broke while the phase ran
    if (decided.source === 'local' || ctx.downstreamClosed) {
      response.body.abort(decided.source === 'local' ? 'replaced by a local reply' : 'client closed the request');
      const reply = decided.toLocalReply();
      if (decided.source === 'local') this.#writer.local(ctx, reply);
      return this.#observed(ctx, new ResponseOutcome(decided.source === 'local' ? reply.status : 0, []));
    }
    const headers = decided.headers.list;
    this.#writer.relay(ctx, response, decided.status, headers);
    this.#observed(ctx, decided.status === response.status && headers === response.headerList ? response : new ResponseOutcome(decided.status, headers));
  }

  /** Upstream phase for an answer: observe only, then the chain is done (the writer pumps the body). */
  #observed(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
    this.#observe(ctx, outcome);
    this.#done(ctx);
  }

  /** Every filter's `onUpstreamResponse`, in reverse order (observe only). */
  #observe(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
    notifyEach(ctx, this.filterSetOf(ctx).reversed, 'onUpstreamResponse', outcome, 'filter failed observing the upstream response');
  }

  /** Upstream phase for a failure before any answer: observe, then fail or re-run. */
  #upstreamPhase(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
    this.#observe(ctx, outcome);
    const decision = shouldRerun({
      outcome,
      attempt: ctx.attempt,
      policy: this.#policy,
      elapsedMs: performance.now() - ctx.startedAt,
      jitter: Math.random(),
      method: ctx.method,
      bodyReplayable: ctx.body === null || ctx.body.replayable,
      responseStarted: ctx.exchange.headSent,
      downstreamClosed: ctx.downstreamClosed,
    });
    if (decision.kind === 'rerun') {
      if (ctx.trace !== undefined) ctx.trace.rerun(decision.reason, ctx.attempt + 1, decision.delayMs);
      if (decision.delayMs > 0) return this.#backoff(ctx, decision.reason, decision.delayMs);
      this.#rerun(ctx, decision.reason);
      return this.#requestPhase(ctx, 0);
    }
    if (decision.kind === 'fail') {
      if (decision.error === ERRORS.DOWNSTREAM_CLOSED) ctx.error ??= decision.error; // an answer the edge already gave (a 408) stays
      else {
        let details = describe(outcome);
        if (decision.limit === 'budget') {
          this.counters.tallies.rerunAttempts.budgetExhausted++;
          details += `; re-run budget of ${this.#policy.budgetMs} ms spent after ${ctx.attempt} re-run(s)`;
        }
        if (decision.error === ERRORS.UPSTREAM_RESET_AFTER_SEND) this.counters.tallies.upstream.resetsNotReplayable++;
        return this.#error(ctx, decision.error, details, this.filterSetOf(ctx).filters.length);
      }
    }
    this.#done(ctx);
  }

  /** Waits `delayMs`, then re-runs; a client that leaves meanwhile ends the request as cancelled instead. */
  #backoff(ctx: ProxyRequest, reason: RerunReason, delayMs: number): void {
    this.counters.tallies.rerunAttempts.backoffs++;
    const signal = ctx.signal;
    const onAbort = (): void => {
      clearTimeout(timer);
      this.counters.tallies.rerunAttempts.cancelledInBackoff++;
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
    this.counters.tallies.reruns[reason]++;
    this.counters.rerunsByAttempt[ctx.attempt + 1]!++;
    notifyEach(ctx, this.filterSetOf(ctx).filters, 'onRerun', reason, 'filter failed preparing a re-run');
    ctx.log.debug({ reason, attempt: ctx.attempt + 1, upstream: ctx.upstreamAddress }, 're-running the request');
    ctx.nextAttempt();
  }

  /** A filter at `index` threw or rejected in its request phase: fail its own request (the filters before it may brand the error). */
  #filterFailed(ctx: ProxyRequest, f: ChainFilter, index: number, err: unknown): void {
    if (err instanceof ProxyError) return this.#error(ctx, err.spec, `${f.name}: ${err.details ?? err.message}`, index);
    ctx.log.error({ err, filter: f.name }, 'filter failed');
    this.#error(ctx, ERRORS.FILTER_FAILED, `filter ${f.name} threw: ${(err as Error)?.message ?? String(err)}`, index);
  }

  /** Always called once per client request, when it is finished (every filter's `onDone`). */
  done(ctx: ProxyRequest, status: number, error: Error | undefined): void {
    notifyEach(ctx, this.filterSetOf(ctx).filters, 'onDone', error === undefined ? { status } : { status, error }, 'filter failed in onDone');
  }
}

/** The observe-only hooks: what each is handed besides the request. */
interface NotifyArgs {
  readonly onUpstreamResponse: UpstreamOutcome;
  readonly onRerun: RerunReason;
  readonly onDone: { readonly status: number; readonly error?: Error };
}

/** Calls `hook` on every filter in `filters` that has it; a throw is logged with the filter's name and ignored. */
function notifyEach<H extends keyof NotifyArgs>(ctx: ProxyRequest, filters: readonly ChainFilter[], hook: H, arg: NotifyArgs[H], what: string): void {
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i] as ChainFilter;
    const fn = f[hook] as ((ctx: ProxyRequest, arg: NotifyArgs[H]) => void) | undefined;
    if (fn === undefined) continue;
    try {
      fn.call(f, ctx, arg);
    } catch (err) {
      ctx.log.error({ err, filter: f.name }, what);
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

