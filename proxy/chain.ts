/**
 * The filter chain: user filters, then the built-in stages (actor-cache when on, then ext-proc or the apiserver
 * resolver), then the router — which is not a filter, so "router last" cannot be got wrong.
 *
 * The chain is the single owner of the same-request re-run loop. When the router reports a stale rejection, a
 * connect failure or a reset, `shouldRerun` decides; on a re-run every filter's `onRerun` is called (actor-cache
 * evicts there), the route and the attempt's header changes are cleared, and the whole chain runs again from
 * the top for the same client request (Envoy's recreateStream). Filters never loop on their own.
 */
import type { Filter, FilterResult, RerunReason, UpstreamOutcome } from './filter.js';
import type { ProxyRequest } from './context.js';
import type { Router } from './router.js';
import type { Counters } from './stats.js';
import { ERRORS, ProxyError } from './errors.js';
import { sendError, sendLocalReply } from './local-reply.js';
import { shouldRerun } from './rerun.js';

export interface ChainOptions {
  readonly maxReruns: number;
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

export class Chain {
  readonly #reversed: readonly Filter[];

  constructor(
    readonly filters: readonly Filter[],
    readonly router: Router,
    private readonly counters: Counters,
    private readonly opts: ChainOptions,
  ) {
    if (typeof (router as Partial<Router>).forward !== 'function') throw new Error('the chain must end with a router');
    for (const f of filters) {
      if (typeof f?.name !== 'string' || f.name === '') throw new Error('every filter needs a name');
    }
    this.#reversed = [...filters].reverse();
  }

  /**
   * Runs one client request through the chain: resolves (with `ctx`) once the response is decided — being
   * relayed, or answered locally. Never rejects.
   */
  async handle(ctx: ProxyRequest): Promise<ProxyRequest> {
    try {
      await this.#run(ctx);
    } catch (err) {
      ctx.log.error({ err }, 'request failed inside the proxy');
      sendError(ctx, ERRORS.INTERNAL, (err as Error)?.message);
    }
    return ctx;
  }

  async #run(ctx: ProxyRequest): Promise<void> {
    const filters = this.filters;
    for (;;) {
      // Request phase: filters in order; any may answer locally.
      for (let i = 0; i < filters.length; i++) {
        const f = filters[i] as Filter;
        if (f.onRequest === undefined) continue;
        let result: FilterResult | Promise<FilterResult>;
        try {
          result = f.onRequest(ctx);
          if (isPromise(result)) result = await result;
        } catch (err) {
          this.#filterFailed(ctx, f, err);
          return;
        }
        if (result.kind === 'reply') {
          sendLocalReply(ctx, result.reply);
          return;
        }
      }
      if (ctx.downstreamClosed) {
        ctx.error = ERRORS.DOWNSTREAM_CLOSED;
        return;
      }
      if (ctx.route === undefined) {
        sendError(ctx, ERRORS.NO_ROUTE, 'no route after the request phase');
        return;
      }

      let outcome: UpstreamOutcome;
      try {
        outcome = await this.router.forward(ctx);
      } catch (err) {
        if (err instanceof ProxyError) sendError(ctx, err.spec, err.details);
        else throw err;
        return;
      }

      // Upstream phase: observe only, in reverse order.
      const reversed = this.#reversed;
      for (let i = 0; i < reversed.length; i++) {
        const f = reversed[i] as Filter;
        if (f.onUpstreamResponse === undefined) continue;
        try {
          f.onUpstreamResponse(ctx, outcome);
        } catch (err) {
          ctx.log.error({ err, filter: f.name }, 'filter failed observing the upstream response');
        }
      }

      const decision = shouldRerun({
        outcome,
        attempt: ctx.attempt,
        maxReruns: this.opts.maxReruns,
        method: ctx.method,
        bodyReplayable: ctx.body === null || ctx.body.replayable,
        responseStarted: ctx.responding,
        downstreamClosed: ctx.downstreamClosed,
      });
      if (decision.kind === 'relay') return;
      if (decision.kind === 'fail') {
        if (decision.error === ERRORS.DOWNSTREAM_CLOSED) ctx.error = decision.error;
        else sendError(ctx, decision.error, describe(outcome));
        return;
      }
      this.#rerun(ctx, decision.reason);
    }
  }

  #rerun(ctx: ProxyRequest, reason: RerunReason): void {
    if (reason === 'stale') this.counters.rerunsStale++;
    else if (reason === 'connect') this.counters.rerunsConnect++;
    else this.counters.rerunsReset++;
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

  #filterFailed(ctx: ProxyRequest, f: Filter, err: unknown): void {
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
      return 'upstream answered 421 x-ate-assignment-stale';
    case 'connect-failed':
      return `upstream connect failed: ${outcome.code}`;
    case 'reset':
      return `upstream reset (${outcome.code})${outcome.requestWritten ? ' after the request was written' : ''}`;
    case 'timeout':
      return 'no upstream response headers within the route timeout';
    default:
      return outcome.kind;
  }
}
