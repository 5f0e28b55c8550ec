/**
 * The router: the last stage of the chain (not a filter). It sends the request to `ctx.route` — and only there —
 * through that worker's keep-alive pool with undici's low-level `dispatch`, and reports what comes back: an
 * `UpstreamResponse` once response headers arrived (its body paused until the chain pipes it into the response
 * writer, so the chain can run the response phase first), or the failure before any (`outcome.ts` classifies).
 * Each request it sends is one attempt (`attempt.ts`: undici's dispatch handler and the attempt's state).
 * It never writes to the client: the chain and the response writer do.
 *
 * A stale rejection is never handed on: its body is read and discarded so the connection stays usable.
 * An upgrade handshake (`ctx.upgrade`, WebSocket) goes the same way with undici's `upgrade` option; on a 101
 * undici hands over the worker's socket, which the answer carries (with the pool slot, held until the tunnel
 * closes).
 *
 * Upstream protocol: gRPC from a client that can carry it end to end (an HTTP/2 client: `carriesGrpc`) goes
 * through the worker's HTTP/2 session (`h2-sessions.ts`), with `te: trailers`; everything else through the
 * worker's HTTP/1.1 pool. Both answer the same handler (`UpstreamAttempt`), so the stale rule, the outcomes and
 * re-runs do not depend on the protocol.
 * Overflow: a worker whose pool has every connection busy and a full queue gets no more requests; the router
 * refuses the request before sending anything (503 `PROXY_ERR_UPSTREAM_OVERFLOW`, Envoy's UO). That is a local
 * answer, not an upstream outcome: no filter sees it, so it never evicts a binding and never re-runs.
 *
 * Outlier detection (`outliers.ts`): the first attempt to an address that cannot connect marks the address down;
 * the requests handed to its pool or session and not yet sent then fail at once, each as a connect failure that
 * was never sent (`ejected`), in order after the one that failed (so the cache evicts the worker's bindings once,
 * on the first); while it is down a request the cache routes there fails the same way without a connect, and one
 * the resolver routes there lets it back. Only the failure that marked the address down counts as a failed
 * connect (`upstream.connectFailures`); the others count as failed fast (`upstream.outliers.failedFast`).
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { ProxyRequest } from '../request/context.js';
import type { Counters } from '../ops/stats.js';
import { ERRORS, ProxyError } from '../http/errors.js';
import { isGrpcContentType } from '../http/grpc.js';
import type { UpstreamPools } from './pools.js';
import { EJECTED } from './outcome.js';
import { OutlierDetector } from './outliers.js';
import { UpstreamAttempt, type AttemptCallback } from './attempt.js';
import { startUpstreamSpan, endUpstreamSpan } from './upstream-span.js';

export interface Router {
  /**
   * Forwards `ctx` to `ctx.route` and calls `done` once: with the answer as soon as its headers arrived (called
   * synchronously, from undici's callback), or with the failure before any (from a fresh microtask, so a re-run
   * never starts inside the HTTP client's callbacks). Throws `ProxyError` for an unusable route or an overflow.
   */
  forward(ctx: ProxyRequest, done: AttemptCallback): void;
}

export interface RouterOptions {
  readonly routeTimeoutMs: number;
  /** Outlier detection's probe of a down address (`probe.ts`); absent: no outlier detection. */
  readonly probe?: (address: string) => Promise<boolean>;
  readonly log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** The request goes over the worker's HTTP/2 session: gRPC from a client that carries it end to end. */
function wantsH2(ctx: ProxyRequest): boolean {
  return ctx.exchange.carriesGrpc && ctx.method === 'POST' && isGrpcContentType(ctx.headers.get('content-type'));
}

export class UndiciRouter implements Router {
  /** Down worker addresses; undefined without outlier detection. */
  readonly outliers: OutlierDetector | undefined;

  /** `h2`: the workers' HTTP/2 sessions for gRPC (without them, gRPC goes as HTTP/1.1 too). */
  constructor(
    private readonly pools: UpstreamPools,
    private readonly counters: Counters,
    private readonly opts: RouterOptions,
    private readonly h2?: UpstreamPools,
  ) {
    const probe = opts.probe;
    this.outliers =
      probe === undefined
        ? undefined
        : new OutlierDetector({ probe, onEject: (address) => this.#ejectUnsent(address), tallies: counters.tallies.upstream.outliers, ...(opts.log === undefined ? {} : { log: opts.log }) });
  }

  forward(ctx: ProxyRequest, done: AttemptCallback): void {
    const route = ctx.route;
    if (route === undefined) throw new ProxyError(ERRORS.NO_ROUTE);
    const h2 = this.h2 !== undefined && wantsH2(ctx);
    const pool = (h2 ? (this.h2 as UpstreamPools) : this.pools).get(route.address);
    if (pool === undefined) throw new ProxyError(ERRORS.BAD_ROUTE, `route address "${route.address}" is not a literal ip:port`);
    if (this.outliers?.route(route.address, route.source) === 'fail-fast') return this.#failFast(ctx, route.address, done);
    if (!pool.admit()) throw new ProxyError(ERRORS.UPSTREAM_OVERFLOW, `${route.address}: ${pool.limit} requests running or queued`);
    ctx.upstreamAddress = route.address;
    ctx.upstreamMs = undefined;
    ctx.upstreamStartedAt = performance.now();
    // Tracing on: the attempt's client span, whose context the worker gets as `traceparent`.
    const span = ctx.trace === undefined ? undefined : startUpstreamSpan(ctx, ctx.trace, route.address);
    const attempt = new UpstreamAttempt(ctx, route.address, done, this.counters, pool, this.outliers, span);
    ctx.upstream = attempt;
    pool.pool.dispatch(
      {
        path: ctx.path,
        method: ctx.method,
        headers: (h2 ? [...ctx.headers.list, 'te', 'trailers'] : ctx.headers.list) as string[],
        body: (ctx.body === null ? null : ctx.body.forAttempt()) as Dispatcher.DispatchOptions['body'],
        headersTimeout: this.opts.routeTimeoutMs,
        idempotent: false,
        // An upgrade (WebSocket) handshake: undici sends Connection: upgrade and hands over the socket on a 101.
        upgrade: ctx.upgrade?.token ?? null,
        // Plain HTTP has no TLS server name; a value here spares undici deriving one from Host on every request.
        servername: route.address,
      } as Dispatcher.DispatchOptions,
      attempt,
    );
  }

  /** The address is down: the request fails at once as a connect failure, never sent (reported from a microtask). */
  #failFast(ctx: ProxyRequest, address: string, done: AttemptCallback): void {
    ctx.upstreamAddress = address;
    ctx.upstreamMs = undefined;
    // Tracing on: the attempt still has its span, ended at once (the worker was never asked).
    if (ctx.trace !== undefined) endUpstreamSpan(startUpstreamSpan(ctx, ctx.trace, address), 'ejected');
    this.counters.workers.observe(address, EJECTED);
    queueMicrotask(() => done(ctx, EJECTED));
  }

  /** `address` went down: every request handed to its pool or session and not sent yet fails at once. */
  #ejectUnsent(address: string): void {
    this.pools.peek(address)?.ejectUnsent();
    this.h2?.peek(address)?.ejectUnsent();
  }

  /** Stops outlier detection's probes (at shutdown). */
  close(): void {
    this.outliers?.close();
  }
}
