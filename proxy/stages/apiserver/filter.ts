/**
 * The `--resolver apiserver` filter: resolves a request the cache did not route by calling ResumeActor itself,
 * through the same per-actor flight and the same HTTP error catalog extproc uses, and routes to the worker. It
 * stands where the ext-proc filter stands, for the benchmark's comparison arms (no ext_proc hop); production uses
 * ext_proc, which keeps the control-plane identity and the parking lot out of the proxy.
 *
 * Exactly what ext_proc would answer: a host that names no actor → 404 `invalid host "<host>"`; a failed resume →
 * the catalog's status and text; success → route `<ip>:<worker-port>` and `x-ate-target-port: <authority port>`.
 */
import { parseActorHost, normaliseSuffix, type ActorRef } from '../../../lib/actor-ref.js';
import { formatHostPort } from '../../../lib/address.js';
import { httpErrorFor, invalidHostError, type HttpError } from '../../../lib/resume/http-errors.js';
import type { ResumeOutcome } from '../../../lib/resume/outcome.js';
import { TARGET_PORT_HEADER } from '../../../lib/wire-contract.js';
import { CONTINUE, reply, type Filter, type FilterResult, type RequestContext } from '../../api/filter.js';
import { ERRORS, ProxyError } from '../../http/errors.js';

/** A request as the resolver reads it: with its arrival time (`performance.now()`) when it has one. */
export type ResolverContext = RequestContext & { readonly startedAt?: number };

export const APISERVER_RESOLVER_FILTER_NAME = 'apiserver-resolver';

/** The part of `ResumeFlights` the filter uses. */
export interface ActorResolver {
  resolve(ref: ActorRef, key: string, signal?: AbortSignal, budgetMs?: number): Promise<ResumeOutcome>;
}

export interface ApiserverResolverFilterOptions {
  readonly flights: ActorResolver;
  readonly actorSuffix: string;
  /** The port every worker listens on; the route is `<worker ip>:<workerPort>`. */
  readonly workerPort: number;
  /** The request's re-run budget: what is left of it bounds the resume's retries for this request (absent: the flight's). */
  readonly rerunBudgetMs?: number;
  /** The overload manager: why a miss is shed now (503 `PROXY_ERR_OVERLOADED`, as the ext-proc stage answers it), or undefined. */
  readonly shedMiss?: () => string | undefined;
}

function errorReply(error: HttpError): FilterResult {
  return reply({
    status: error.status,
    headers: { 'content-type': 'text/plain' },
    body: error.body,
    details: `actor_edge_${error.outcome}`,
  });
}

export function createApiserverResolverFilter(opts: ApiserverResolverFilterOptions): Filter<ResolverContext> {
  const suffix = normaliseSuffix(opts.actorSuffix);
  return {
    name: APISERVER_RESOLVER_FILTER_NAME,
    async onRequest(ctx: ResolverContext): Promise<FilterResult> {
      if (ctx.route !== undefined) return CONTINUE; // the cache routed it
      const parsed = parseActorHost(ctx.authority, suffix);
      if (parsed.kind === 'invalid') return errorReply(invalidHostError(ctx.authority));
      const shed = opts.shedMiss?.();
      if (shed !== undefined) throw new ProxyError(ERRORS.OVERLOADED, shed);
      const { ref, key, port } = parsed.actor;
      const budget = opts.rerunBudgetMs;
      const left = budget === undefined || ctx.startedAt === undefined ? undefined : Math.max(0, budget - (performance.now() - ctx.startedAt));
      const outcome = await opts.flights.resolve(ref, key, ctx.signal, left);
      if (outcome.kind !== 'ok') {
        const error = httpErrorFor(outcome, key);
        ctx.log.debug({ actor: key, outcome: error.outcome }, 'resume failed');
        return errorReply(error);
      }
      ctx.route = { address: formatHostPort(outcome.ip, opts.workerPort), source: 'apiserver' };
      ctx.headers.set(TARGET_PORT_HEADER, String(port));
      return CONTINUE;
    },
  };
}
