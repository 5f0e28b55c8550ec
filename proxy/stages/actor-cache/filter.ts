/**
 * actor-cache: the cache-first filter in front of ext-proc.
 *
 * - Request phase: parse the actor from the authority with the shared parser (the same code extproc runs). A live
 *   binding routes the request to the cached `ip:port` (`source: 'cache'`, with the binding's generation) and sets
 *   `x-ate-target-port` to the authority's port; ext-proc then skips the request. A hit in the binding's refresh
 *   window starts its refresh-ahead (in the background). A host that names no actor goes on untouched.
 * - A miss leads a miss flight for its actor, or — when another request's miss for the actor is in flight —
 *   waits for it (`miss-flights.ts`): when that miss teaches the cache, the request goes as a hit; otherwise it
 *   goes on to the slow path itself.
 * - Upstream phase: on a miss that ext_proc (or the apiserver resolver) routed, an upstream answer of any kind but
 *   a stale rejection teaches the cache `atespace/name → ip:port`. A stale rejection, a connect failure, a reset or
 *   a worker failing identity verification evicts exactly the binding this attempt used, whether or not the chain re-runs afterwards; a connect failure
 *   also evicts every other binding to that worker learned before this attempt began (`worker`). The flight this
 *   request leads is settled here (or, at the latest, when the request is done).
 * - Re-run: `onRerun` evicts the same way (idempotent with the upstream phase), so the next attempt misses and the
 *   slow path wakes or re-places the actor within the same client request.
 *
 * The filter never answers a request itself and never loops: the chain owns the re-run. Its per-request state
 * lives in its own request slot (`CACHE_SLOT`).
 */
import { SpanKind, type Span } from '@opentelemetry/api';
import { parseActorHost, normaliseSuffix } from '../../../lib/actor-ref.js';
import { ATTR_CACHE } from '../../../lib/tracing/attributes.js';
import { endSpan } from '../../request/trace.js';
import { TARGET_PORT_HEADER } from '../../../lib/wire-contract.js';
import { CONTINUE, type Filter, type FilterResult, type RerunReason, type UpstreamOutcome } from '../../api/filter.js';
import type { ProxyRequest } from '../../request/context.js';
import type { Binding, BindingCache, EvictionReason } from './binding-cache.js';
import type { Flight, MissFlights } from './miss-flights.js';
import type { RefreshAhead } from './refresh-ahead.js';
import { CACHE_SLOT, type CacheStatus, type CacheRequestState } from './request-state.js';

export const ACTOR_CACHE_FILTER_NAME = 'actor-cache';

/** The cache outcome of a request, or undefined when the cache was off or the host named no actor. */
export function cacheOutcome(ctx: ProxyRequest): CacheStatus | undefined {
  return CACHE_SLOT.get(ctx)?.outcome;
}

export interface ActorCacheFilterOptions {
  readonly cache: BindingCache;
  readonly actorSuffix: string;
  /** Miss coalescing; absent: every miss goes to the slow path on its own. */
  readonly flights?: MissFlights;
  /** Refresh-ahead; absent: bindings simply expire. */
  readonly refresh?: RefreshAhead;
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

/** The span of one lookup (tracing on): its outcome for this attempt, `hit`, `miss`, `coalesced` or `gone`. */
export const LOOKUP_SPAN = 'actor-cache lookup';

function endLookup(span: Span, outcome: 'hit' | 'miss' | 'coalesced' | 'gone', refreshAhead = false): void {
  endSpan(span, undefined, refreshAhead ? { [ATTR_CACHE]: outcome, 'actor_edge.cache.refresh_ahead': true } : { [ATTR_CACHE]: outcome });
}

const EVICTION_FOR: Readonly<Record<RerunReason, EvictionReason>> = { stale: 'stale', connect: 'connect', reset: 'reset' };

export function createActorCacheFilter(opts: ActorCacheFilterOptions): Filter<ProxyRequest> {
  const { cache, flights, refresh } = opts;
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

  function route(ctx: ProxyRequest, st: CacheRequestState, binding: Binding): void {
    st.generation = binding.generation;
    ctx.route = { address: binding.address, source: 'cache', generation: binding.generation };
    ctx.headers.setTrusted(TARGET_PORT_HEADER, st.portText); // a constant name and a port number: nothing to check
  }

  /**
   * Acts once per attempt on a failure the worker caused: the binding used, and for a connect failure its worker
   * (`byWorker`; not for a request failed fast because its worker was already down: the failure that marked it
   * down evicted the worker's bindings, once, before any of those requests re-ran).
   */
  function evictAfter(ctx: ProxyRequest, st: CacheRequestState, reason: EvictionReason, byWorker = reason === 'connect'): void {
    if (st.evicted) return;
    st.evicted = true;
    if (st.generation !== undefined && cache.evict(st.key, st.generation, reason)) {
      ctx.log.debug({ actor: st.key, generation: st.generation, reason }, 'actor binding evicted');
    }
    const address = ctx.route?.address;
    if (!byWorker || address === undefined) return;
    const n = cache.evictWorker(address, st.mark);
    if (n > 0) ctx.log.debug({ worker: address, evicted: n, before: st.mark }, 'actor bindings to an unreachable worker evicted');
  }

  /** Learns the route of a miss the worker answered; true when the cache now holds it. */
  function learnRouted(ctx: ProxyRequest, st: CacheRequestState): boolean {
    const r = ctx.route;
    if (st.generation !== undefined || r === undefined) return false;
    if (r.source !== 'extproc' && r.source !== 'apiserver') return false;
    if (cache.learn(st.key, r.address) !== undefined) return true;
    ctx.log.debug({ actor: st.key, address: r.address }, 'route address not cacheable');
    return false;
  }

  function settleFlight(st: CacheRequestState, learned: boolean): void {
    const flight = st.leading;
    if (flight === undefined || flights === undefined) return;
    st.leading = undefined;
    flights.settle(flight, learned);
  }

  /** A follower: wait for the leader's flight, then go as a hit, or on to the slow path alone. */
  async function follow(ctx: ProxyRequest, st: CacheRequestState, flight: Flight, f: MissFlights, span: Span | undefined): Promise<FilterResult> {
    const end = await f.follow(flight, ctx.signal);
    if (end === 'gone') {
      f.count('gone'); // the client left: ext-proc opens no stream for it and the chain ends it
      if (span !== undefined) endLookup(span, 'gone');
      return CONTINUE;
    }
    const binding = end === 'learned' && ctx.route === undefined ? cache.current(st.key) : undefined;
    if (binding === undefined) {
      f.count('alone'); // the leader failed (or took too long): this request runs its own slow path
      if (span !== undefined) endLookup(span, 'miss');
      return CONTINUE;
    }
    f.count('hit');
    if (span !== undefined) endLookup(span, 'coalesced');
    if (st.outcome === 'miss') st.outcome = 'coalesced';
    route(ctx, st, binding);
    return CONTINUE;
  }

  return {
    name: ACTOR_CACHE_FILTER_NAME,
    onRequest(ctx: ProxyRequest): FilterResult | Promise<FilterResult> {
      let st = CACHE_SLOT.get(ctx);
      if (st === undefined) {
        const actor = parseAuthority(ctx.authority);
        if (actor === null) return CONTINUE; // not an actor host: ext-proc decides what to answer
        st = CACHE_SLOT.set(ctx, { key: actor.key, portText: actor.portText, attempt: ctx.attempt, generation: undefined, mark: 0, evicted: false, leading: undefined, outcome: 'miss' });
      }
      st.attempt = ctx.attempt;
      st.generation = undefined;
      st.evicted = false;
      if (ctx.attempt > 0) st.outcome = 'rerun';
      if (ctx.route !== undefined) return CONTINUE; // an earlier filter already routed this attempt
      const span = ctx.trace === undefined ? undefined : ctx.trace.child(LOOKUP_SPAN, SpanKind.INTERNAL, { 'actor_edge.cache.key': st.key });
      st.mark = cache.generationMark();
      const found = cache.lookup(st.key);
      if (found.kind === 'hit') {
        if (st.outcome === 'miss') st.outcome = 'hit';
        route(ctx, st, found.binding);
        const refreshing = found.refreshDue && refresh !== undefined;
        if (refreshing) refresh.start(st.key, found.binding, ctx.authority, ctx.scheme);
        if (span !== undefined) endLookup(span, 'hit', refreshing);
        return CONTINUE;
      }
      if (flights === undefined) {
        if (span !== undefined) endLookup(span, 'miss');
        return CONTINUE;
      }
      const flight = flights.inFlight(st.key);
      if (flight === undefined) {
        st.leading = flights.lead(st.key);
        if (span !== undefined) endLookup(span, 'miss');
        return CONTINUE;
      }
      return follow(ctx, st, flight, flights, span);
    },
    onUpstreamResponse(ctx: ProxyRequest, outcome: UpstreamOutcome): void {
      const st = CACHE_SLOT.get(ctx);
      if (st === undefined || st.attempt !== ctx.attempt) return;
      let learned = false;
      switch (outcome.kind) {
        case 'stale':
          evictAfter(ctx, st, 'stale');
          break;
        case 'connect-failed':
          evictAfter(ctx, st, 'connect', outcome.ejected !== true);
          break;
        case 'reset':
          evictAfter(ctx, st, 'reset');
          break;
        case 'identity-rejected': // only this binding: the next request asks the control plane, this one is not re-run
          evictAfter(ctx, st, 'identity');
          break;
        case 'timeout': // the actor may just be slow: the binding stays
        case 'cancelled': // the client left: that says nothing about the worker
          break;
        case 'response':
          learned = learnRouted(ctx, st);
          break;
      }
      settleFlight(st, learned);
    },
    onRerun(ctx: ProxyRequest, reason: RerunReason): void {
      const st = CACHE_SLOT.get(ctx);
      if (st === undefined) return;
      st.outcome = 'rerun';
      evictAfter(ctx, st, EVICTION_FOR[reason]);
      settleFlight(st, false);
    },
    onDone(ctx: ProxyRequest): void {
      const st = CACHE_SLOT.get(ctx);
      if (st !== undefined) settleFlight(st, false); // ended without an upstream answer (a local reply, an error, the client gone)
    },
  };
}
