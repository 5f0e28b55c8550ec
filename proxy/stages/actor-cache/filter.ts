/**
 * actor-cache: the cache-first filter in front of ext-proc.
 *
 * - Request phase: parse the actor from the authority with the shared parser (the same code extproc runs). A live
 *   binding routes the request to the cached `ip:port` (`source: 'cache'`, with the binding's generation) and sets
 *   `x-ate-target-port` to the authority's port; ext-proc then skips the request. A miss, or a host that names no
 *   actor, goes on untouched.
 * - Upstream phase: on a miss that ext_proc (or the apiserver resolver) routed, an upstream answer of any kind but
 *   a stale rejection teaches the cache `atespace/name → ip:port`. A stale rejection, a connect failure or a reset
 *   evicts exactly the binding this attempt used, whether or not the chain re-runs afterwards.
 * - Re-run: `onRerun` evicts the same way (idempotent with the upstream phase), so the next attempt misses and the
 *   slow path wakes or re-places the actor within the same client request.
 *
 * The filter never answers a request itself and never loops: the chain owns the re-run.
 */
import { parseActorHost, normaliseSuffix } from '../../../lib/actor-ref.js';
import { TARGET_PORT_HEADER } from '../../../lib/wire-contract.js';
import { CONTINUE, type Filter, type FilterResult, type RequestContext, type RerunReason, type UpstreamOutcome } from '../../api/filter.js';
import type { BindingCache, EvictionReason } from './binding-cache.js';

export const ACTOR_CACHE_FILTER_NAME = 'actor-cache';

/** The cache's part in one client request, for the access log: `rerun` once any attempt was re-run. */
export type CacheOutcome = 'hit' | 'miss' | 'rerun';

interface CacheRequestState {
  readonly key: string;
  /** The authority's port, as the `x-ate-target-port` value. */
  readonly portText: string;
  /** The attempt the two fields below describe. */
  attempt: number;
  /** The generation of the binding this attempt was routed with (undefined: a miss). */
  generation: number | undefined;
  /** This attempt's binding has already been evicted (eviction is idempotent per attempt). */
  evicted: boolean;
  outcome: CacheOutcome;
}

const STATE = Symbol.for('actor-edge.actor-cache');

function stateOf(ctx: Pick<RequestContext, 'locals'>): CacheRequestState | undefined {
  return ctx.locals.get(STATE) as CacheRequestState | undefined;
}

/** The cache outcome of a request, or undefined when the cache was off or the host named no actor. */
export function cacheOutcome(ctx: Pick<RequestContext, 'locals'>): CacheOutcome | undefined {
  return stateOf(ctx)?.outcome;
}

export interface ActorCacheFilterOptions {
  readonly cache: BindingCache;
  readonly actorSuffix: string;
}

/** What an authority names: the cache key and the port (also as the header value it becomes). */
interface AuthorityActor {
  readonly key: string;
  readonly portText: string;
}

/**
 * Authorities seen recently → what they name (null: no actor). Hosts are client-controlled, so the memo is
 * bounded hard and cheaply: it is emptied whenever it reaches this many entries.
 */
const AUTHORITY_MEMO_MAX = 1024;

const EVICTION_FOR: Readonly<Record<RerunReason, EvictionReason>> = { stale: 'stale', connect: 'connect', reset: 'reset' };

export function createActorCacheFilter(opts: ActorCacheFilterOptions): Filter {
  const { cache } = opts;
  const suffix = normaliseSuffix(opts.actorSuffix);
  const memo = new Map<string, AuthorityActor | null>();

  function parseAuthority(authority: string): AuthorityActor | null {
    let found = memo.get(authority);
    if (found === undefined) {
      const parsed = parseActorHost(authority, suffix);
      found = parsed.kind === 'ok' ? { key: parsed.actor.key, portText: String(parsed.actor.port) } : null;
      if (memo.size >= AUTHORITY_MEMO_MAX) memo.clear();
      memo.set(authority, found);
    }
    return found;
  }

  function evictUsed(ctx: RequestContext, st: CacheRequestState, reason: EvictionReason): void {
    if (st.generation === undefined || st.evicted) return;
    st.evicted = true;
    if (cache.evict(st.key, st.generation, reason)) {
      ctx.log.debug({ actor: st.key, generation: st.generation, reason }, 'actor binding evicted');
    }
  }

  return {
    name: ACTOR_CACHE_FILTER_NAME,

    onRequest(ctx: RequestContext): FilterResult {
      let st = stateOf(ctx);
      if (st === undefined) {
        const actor = parseAuthority(ctx.authority);
        if (actor === null) return CONTINUE; // not an actor host: ext-proc decides what to answer
        st = { key: actor.key, portText: actor.portText, attempt: ctx.attempt, generation: undefined, evicted: false, outcome: 'miss' };
        ctx.locals.set(STATE, st);
      }
      st.attempt = ctx.attempt;
      st.generation = undefined;
      st.evicted = false;
      if (ctx.attempt > 0) st.outcome = 'rerun';
      if (ctx.route !== undefined) return CONTINUE; // an earlier filter already routed this attempt
      const found = cache.lookup(st.key);
      if (found.kind === 'miss') return CONTINUE;
      st.generation = found.binding.generation;
      if (st.outcome === 'miss') st.outcome = 'hit';
      ctx.route = { address: found.binding.address, source: 'cache', generation: found.binding.generation };
      ctx.headers.set(TARGET_PORT_HEADER, st.portText);
      return CONTINUE;
    },

    onUpstreamResponse(ctx: RequestContext, outcome: UpstreamOutcome): void {
      const st = stateOf(ctx);
      if (st === undefined || st.attempt !== ctx.attempt) return;
      switch (outcome.kind) {
        case 'stale':
          return evictUsed(ctx, st, 'stale');
        case 'connect-failed':
          return evictUsed(ctx, st, 'connect');
        case 'reset':
          return evictUsed(ctx, st, 'reset');
        case 'timeout':
          return; // the actor may just be slow: the binding stays
        case 'cancelled':
          return; // the client left: that says nothing about the worker
        case 'response': {
          const route = ctx.route;
          if (st.generation !== undefined || route === undefined) return;
          if (route.source !== 'extproc' && route.source !== 'apiserver') return;
          if (cache.learn(st.key, route.address) === undefined) {
            ctx.log.debug({ actor: st.key, address: route.address }, 'route address not cacheable');
          }
          return;
        }
      }
    },

    onRerun(ctx: RequestContext, reason: RerunReason): void {
      const st = stateOf(ctx);
      if (st === undefined) return;
      st.outcome = 'rerun';
      evictUsed(ctx, st, EVICTION_FOR[reason]);
    },
  };
}
