/**
 * The router: the last stage of the chain (not a filter). It sends the request to `ctx.route` — and only there —
 * through that worker's keep-alive pool with undici's low-level `dispatch`, and reports what comes back: an
 * `UpstreamResponse` once response headers arrived (its body paused until the chain pipes it into the response
 * writer, so the chain can run the response phase first), or the failure before any (`outcome.ts` classifies).
 * It never writes to the client: the chain and the response writer do.
 *
 * A stale rejection is never handed on: its body is read and discarded so the connection stays usable.
 * An upgrade handshake (`ctx.upgrade`, WebSocket) goes the same way with undici's `upgrade` option; on a 101
 * undici hands over the worker's socket, which the answer carries (with the pool slot, held until the tunnel
 * closes).
 *
 * Upstream protocol: gRPC from a client that can carry it end to end (an HTTP/2 client: `carriesGrpc`) goes
 * through the worker's HTTP/2 session (`h2-sessions.ts`), with `te: trailers`; everything else through the
 * worker's HTTP/1.1 pool. Both answer the same handler, so the stale rule, the outcomes and re-runs do not depend
 * on the protocol.
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
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Span } from '@opentelemetry/api';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxyRequest } from '../request/context.js';
import type { Counters } from '../ops/stats.js';
import { ERRORS, ProxyError } from '../http/errors.js';
import { isGrpcContentType } from '../http/grpc.js';
import { relayHeaders } from '../http/relayed-headers.js';
import { declaredTrailer, trailerList, type UpstreamTrailers } from '../http/trailers.js';
import type { UpstreamPools, WorkerPool } from './pools.js';
import type { UnsentAttempt, UnsentList } from './unsent-list.js';
import { CANCELLED, EJECTED, STALE, classifyFailure, isStaleRejection, type FailureOutcome } from './outcome.js';
import { OutlierDetector } from './outliers.js';
import { UpstreamResponse, type AttemptOutcome, type BodySink, type UpstreamBody } from './response.js';
import { startUpstreamSpan, endUpstreamSpan } from './upstream-span.js';

/** Receives an attempt's outcome. */
export type OutcomeCallback = (ctx: ProxyRequest, outcome: AttemptOutcome) => void;

export interface Router {
  /**
   * Forwards `ctx` to `ctx.route` and calls `done` once: with the answer as soon as its headers arrived (called
   * synchronously, from undici's callback), or with the failure before any (from a fresh microtask, so a re-run
   * never starts inside the HTTP client's callbacks). Throws `ProxyError` for an unusable route or an overflow.
   */
  forward(ctx: ProxyRequest, done: OutcomeCallback): void;
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
        : new OutlierDetector({ probe, onEject: (address) => this.#ejectUnsent(address), tallies: counters.outliers, ...(opts.log === undefined ? {} : { log: opts.log }) });
  }

  forward(ctx: ProxyRequest, done: OutcomeCallback): void {
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
  #failFast(ctx: ProxyRequest, address: string, done: OutcomeCallback): void {
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

const enum State {
  Waiting,
  /** Response headers arrived and were handed on; the body waits (paused) to be piped. */
  Headed,
  Piped,
  Discarding,
  Done,
}

/** What arrived while the body waited to be piped. */
interface Held {
  readonly chunks: Buffer[];
  /** The body completed (with these trailers) before it was piped. */
  complete: { readonly trailers: UpstreamTrailers } | undefined;
}

/** One attempt's undici handler (undici's native handler interface: no wrapping, raw header buffers) and its body. */
class UpstreamAttempt implements Dispatcher.DispatchHandler, UpstreamBody, UnsentAttempt {
  #state = State.Waiting;
  /** undici has a connected socket for this attempt and began writing the request. */
  #started = false;
  /** undici wrote the whole request, body included (`onRequestSent`). */
  #written = false;
  #abort: ((err?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #sink: BodySink | undefined;
  #held: Held | undefined;
  /** undici was told to pause (a chunk, or the head, arrived before the body was piped). */
  #paused = false;
  #failure: FailureOutcome | undefined;
  // UnsentAttempt: the links of the pool's unsent list (`unsent-list.ts`).
  unsentList: UnsentList | undefined = undefined;
  unsentPrev: UnsentAttempt | undefined = undefined;
  unsentNext: UnsentAttempt | undefined = undefined;

  constructor(
    private readonly ctx: ProxyRequest,
    /** The route's worker address. */
    private readonly address: string,
    private done: OutcomeCallback | undefined,
    private readonly counters: Counters,
    private pool: WorkerPool | undefined,
    private readonly outliers: OutlierDetector | undefined,
    /** Tracing on: this attempt's span, ended when the attempt is over (its body included). */
    private span: Span | undefined,
  ) {
    pool?.unsent.add(this);
  }

  // undici's callbacks: the worker's answer, inside the containment boundary. A throw in handling it (the chain's
  // response phase, the response writer, the body pump all run from here) ends this request alone.

  onUpgrade(status: number, raw: Buffer[] | string[] | null, socket: Duplex): void {
    try {
      this.#onUpgrade(status, raw, socket);
    } catch (err) {
      this.#internalError(err);
    }
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    try {
      return this.#onHeaders(status, raw, resume);
    } catch (err) {
      this.#internalError(err);
      return false;
    }
  }

  onData(chunk: Buffer): boolean {
    try {
      return this.#onData(chunk);
    } catch (err) {
      this.#internalError(err);
      return false;
    }
  }

  onComplete(trailers: UpstreamTrailers): void {
    try {
      this.#onComplete(trailers);
    } catch (err) {
      this.#internalError(err);
    }
  }

  onError(err: Error): void {
    try {
      this.#onError(err);
    } catch (err) {
      this.#internalError(err);
    }
  }

  /** Handling the worker's answer threw: the request ends (500 or a reset) and undici drops the upstream request. */
  #internalError(err: unknown): void {
    const abort = this.#abort;
    this.#state = State.Done;
    this.#sink = undefined;
    this.#held = undefined;
    this.done = undefined;
    this.#release();
    if (this.span !== undefined) this.#endSpan('internal-error');
    this.ctx.internalError('upstream-response', err);
    abort?.(err instanceof Error ? err : new Error(String(err)));
  }

  /** The worker's address went down before this attempt started writing: it fails at once, unsent. */
  eject(): void {
    if (this.#state !== State.Waiting || this.#started) return;
    this.#state = State.Done; // undici drops it unsent when it reaches a connection (`onConnect`)
    this.counters.outliers.failedFast++;
    this.#settle(EJECTED);
  }

  /** Ends the attempt's span once (`outcome`: how it ended, when not with the response handed on). */
  #endSpan(outcome: string | undefined, status?: number): void {
    const span = this.span;
    if (span === undefined) return;
    this.span = undefined;
    endUpstreamSpan(span, outcome, status);
  }

  /** undici: the worker answered 101 to an upgrade request and handed over its socket (the slot goes with it). */
  #onUpgrade(status: number, raw: Buffer[] | string[] | null, socket: Duplex): void {
    this.counters.countUpstream(status);
    this.#headAt();
    if (this.span !== undefined) this.#endSpan('response', status);
    const pool = this.pool;
    this.pool = undefined;
    this.#state = State.Done;
    const release = (): void => pool?.release();
    this.#settle(new UpstreamResponse(status, relayHeaders((raw ?? []) as Buffer[]), undefined, this, { socket: socket as Socket, release }));
  }

  /**
   * The client went away: stop the upstream request (no-op once it is complete). A request still queued in the
   * pool is reported cancelled at once; undici aborts it when it reaches a connection (`onConnect`), unsent.
   */
  cancel(): void {
    if (this.#state === State.Done) return;
    if (this.#abort !== undefined) {
      this.#abort(new Error('client closed the request'));
      return;
    }
    this.#state = State.Done;
    this.#settle(CANCELLED);
  }

  /** undici is done with the request (exactly one of onComplete / onError): its pool slot is free. */
  #release(): void {
    this.pool?.unsent.delete(this);
    this.pool?.release();
    this.pool = undefined;
  }

  /**
   * Reports the outcome once: an answer synchronously, anything else from a fresh microtask. Every attempt ends
   * here, HTTP/1.1, HTTP/2 and upgrades alike, so this is where the worker's counters see it.
   */
  #settle(outcome: AttemptOutcome): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    this.pool?.unsent.delete(this);
    this.counters.workers.observe(this.address, outcome);
    if (outcome.kind === 'response') {
      done(this.ctx, outcome);
      return;
    }
    if (this.span !== undefined) this.#endSpan(outcome.kind);
    const ctx = this.ctx;
    queueMicrotask(() => done(ctx, outcome));
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    this.#started = true;
    this.pool?.unsent.delete(this);
    if (this.#state === State.Done || this.ctx.downstreamClosed) abort(new Error('client closed the request'));
  }

  /** undici: the request, body included, has been written to the socket. */
  onRequestSent(): void {
    this.#written = true;
  }

  #onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 100 Continue, 103 Early Hints: not relayed
    this.counters.countUpstream(status);
    this.#headAt();
    if (this.span !== undefined) this.span.setAttribute('http.response.status_code', status);
    if (isStaleRejection(status, raw)) {
      this.#state = State.Discarding;
      this.#settle(STALE);
      return true;
    }
    this.#resume = resume;
    this.#state = State.Headed;
    this.#settle(new UpstreamResponse(status, relayHeaders(raw), declaredTrailer(raw), this, undefined));
    // Still not piped (the chain waits for a promised decision): hold the body, paused until it is.
    this.#paused = this.#state === State.Headed;
    return !this.#paused;
  }

  /** The worker's response head arrived: the access log's upstream time. */
  #headAt(): void {
    const ctx = this.ctx;
    if (ctx.upstream === this) ctx.upstreamMs = performance.now() - ctx.upstreamStartedAt;
  }

  // UpstreamBody

  pipe(sink: BodySink): void {
    if (this.#state !== State.Headed) return;
    this.#state = State.Piped;
    this.#sink = sink;
    const held = this.#held;
    this.#held = undefined;
    let flowing = true;
    for (const chunk of held?.chunks ?? []) flowing = sink.data(chunk);
    if (held?.complete !== undefined) {
      this.#state = State.Done;
      sink.end(trailerList(held.complete.trailers));
      return;
    }
    // Piped before anything arrived, or after: resume what was paused (unless the sink paused it again).
    if (this.#paused && flowing) {
      this.#paused = false;
      this.#resume?.();
    }
  }

  resume(): void {
    if (this.#state === State.Piped) this.#resume?.();
  }

  abort(reason: string): void {
    if (this.span !== undefined) this.#endSpan('aborted');
    if (this.#state === State.Done && this.#abort === undefined) return;
    this.#state = State.Done;
    this.#sink = undefined;
    this.#held = undefined;
    this.#abort?.(new Error(reason));
  }

  failure(): FailureOutcome | undefined {
    return this.#failure;
  }

  #onData(chunk: Buffer): boolean {
    if (this.#state === State.Piped) return (this.#sink as BodySink).data(chunk);
    if (this.#state === State.Headed) {
      (this.#held ??= { chunks: [], complete: undefined }).chunks.push(chunk);
      this.#paused = true;
      return false;
    }
    return true;
  }

  /** The upstream body is complete, with its trailers (if any). */
  #onComplete(trailers: UpstreamTrailers): void {
    this.#release();
    if (this.span !== undefined) this.#endSpan(undefined);
    if (this.#state === State.Headed) {
      (this.#held ??= { chunks: [], complete: undefined }).complete = { trailers };
      return;
    }
    const sink = this.#state === State.Piped ? this.#sink : undefined;
    this.#state = State.Done;
    this.#sink = undefined;
    sink?.end(trailerList(trailers));
  }

  #onError(err: Error): void {
    this.#release();
    const state = this.#state;
    this.#state = State.Done;
    if (this.span !== undefined && (state === State.Piped || state === State.Discarding)) this.#endSpan('body-error');
    if (state === State.Piped) {
      const sink = this.#sink as BodySink;
      this.#sink = undefined;
      sink.error(err);
      return;
    }
    if (state !== State.Waiting && state !== State.Headed) return;
    const seen = this.ctx.downstreamClosed
      ? CANCELLED // we aborted the upstream because the client left: that is not the worker failing
      : classifyFailure(err, this.#started, this.#written);
    // A connect that failed after the address went down (it was under way then) is failed fast, not a new failure.
    const outcome = seen.kind === 'connect-failed' && this.outliers?.isDown(this.address) === true ? EJECTED : seen;
    this.#count(outcome);
    if (state === State.Headed) {
      this.#held = undefined;
      this.#failure = outcome;
      if (this.span !== undefined) this.#endSpan(outcome.kind);
      return;
    }
    this.#settle(outcome);
    // After this attempt's outcome is on its way, so the requests it ejects re-run after it (one eviction, first).
    if (seen.kind === 'connect-failed') this.outliers?.connectFailed(this.address, seen.code);
  }

  #count(outcome: FailureOutcome): void {
    if (outcome.kind === 'connect-failed') {
      if (outcome.ejected !== true) this.counters.upstreamConnectFailures++; // failed fast: counted by the detector
    } else if (outcome.kind === 'reset') this.counters.upstreamResets++;
    else if (outcome.kind === 'identity-rejected') {
      this.counters.upstreamIdentityFailures++;
      this.ctx.log.warn({ worker: this.ctx.upstreamAddress, presented: outcome.presented, reason: outcome.reason }, 'upstream worker failed identity verification');
    }
  }
}
