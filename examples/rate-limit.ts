/**
 * Example filter: a token bucket per actor. Each actor (parsed from Host with the proxy's own actor parser) may
 * receive RATE_LIMIT_RPS requests per second on average, with bursts up to RATE_LIMIT_BURST; beyond that the
 * proxy answers 429 with Retry-After, and the actor is not woken. Hosts that name no actor pass through untouched.
 *
 *   RATE_LIMIT_RPS=50 RATE_LIMIT_BURST=100 actor-edge proxy --filter ./dist/examples/rate-limit.js
 *
 * Buckets live in a bounded LRU (RATE_LIMIT_MAX_ACTORS, default 10000), per proxy process: with `--workers N`
 * each process enforces the limit on its own share of the traffic.
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { LRUCache } from 'lru-cache';
import { CONTINUE, parseActorHost, reply, type Filter, type FilterFactory, type FilterResult, type RequestContext } from '../proxy/api/public.js';

export interface RateLimitOptions {
  /** Sustained requests per second per actor. */
  readonly ratePerSecond: number;
  /** Bucket size: how many requests may arrive at once. */
  readonly burst: number;
  readonly maxActors?: number;
  readonly actorSuffix: string;
  /** Millisecond clock (tests inject one). */
  readonly now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export function createRateLimitFilter(opts: RateLimitOptions): Filter {
  if (!(opts.ratePerSecond > 0) || !(opts.burst >= 1)) throw new Error('rate-limit: RATE_LIMIT_RPS must be > 0 and RATE_LIMIT_BURST >= 1');
  const now = opts.now ?? (() => performance.now());
  const buckets = new LRUCache<string, Bucket>({ max: opts.maxActors ?? 10_000 });
  const perMs = opts.ratePerSecond / 1000;
  return {
    name: 'rate-limit',
    onRequest(ctx: RequestContext): FilterResult {
      if (ctx.attempt > 0) return CONTINUE; // a re-run is the same request: it was already counted
      const parsed = parseActorHost(ctx.authority, opts.actorSuffix);
      if (parsed.kind !== 'ok') return CONTINUE;
      const t = now();
      let b = buckets.get(parsed.actor.key);
      if (b === undefined) {
        b = { tokens: opts.burst, updatedAt: t };
        buckets.set(parsed.actor.key, b);
      } else {
        b.tokens = Math.min(opts.burst, b.tokens + (t - b.updatedAt) * perMs);
        b.updatedAt = t;
      }
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return CONTINUE;
      }
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
      return reply({
        status: 429,
        headers: { 'retry-after': String(retryAfter), 'content-type': 'text/plain; charset=utf-8' },
        body: `rate limit exceeded for actor ${parsed.actor.key}\n`,
        details: `rate-limit: ${parsed.actor.key}`,
      });
    },
  };
}

const factory: FilterFactory = ({ log, actorSuffix }) => {
  const ratePerSecond = Number(process.env.RATE_LIMIT_RPS ?? 10);
  const burst = Number(process.env.RATE_LIMIT_BURST ?? ratePerSecond);
  const maxActors = Number(process.env.RATE_LIMIT_MAX_ACTORS ?? 10_000);
  log.info({ ratePerSecond, burst, maxActors }, 'rate-limit filter loaded');
  return createRateLimitFilter({ ratePerSecond, burst, maxActors, actorSuffix });
};
export default factory;
