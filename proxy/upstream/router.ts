/**
 * The router: the last stage of the chain (not a filter). It sends the request to `ctx.route` — and only there —
 * through that worker's keep-alive pool with undici's low-level `dispatch`, and classifies what comes back as an
 * `UpstreamOutcome`. A normal answer is relayed straight into the node response as it arrives (body chunks are
 * written as they come, with backpressure both ways), so server-sent events reach the client one by one. A stale
 * rejection is never relayed: its body is read and discarded so the connection stays usable.
 *
 * When `ctx.responseHeadTransform` is set (ext_proc with response headers SEND, and the filters' response phase,
 * which the chain composes into it), the response head is handed to it first and written only as it decides (or
 * replaced by its local reply); the upstream is paused while a promised decision is pending. Requests without one
 * take the direct path.
 * An upgrade handshake (`ctx.upgrade`, WebSocket) goes the same way with undici's `upgrade` option: a non-101 answer
 * is classified and relayed as any; on a 101 undici hands over the socket and `tunnel.ts` relays it.
 * Upstream protocol (`protocol-choice.ts`): gRPC from an HTTP/2 client goes through the worker's HTTP/2 session
 * (`h2c-sessions.ts`), with `te: trailers`, and its trailers (`grpc-status`, `grpc-message`) are relayed;
 * everything else goes through the worker's HTTP/1.1 pool. Both answer the same way to the handler below, so the
 * stale rule, the outcomes and re-runs do not depend on the protocol.
 * Overflow: a worker whose pool has every connection busy and a full queue gets no more requests; the router
 * refuses the request before sending anything (503 `PROXY_ERR_UPSTREAM_OVERFLOW`, Envoy's UO). That is a local
 * answer, not an upstream outcome: no filter sees it, so it never evicts a binding and never re-runs.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { UpstreamOutcome } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';
import type { Counters } from '../ops/stats.js';
import type { UpstreamPools, WorkerPool } from './pools.js';
import { ERRORS, ProxyError } from '../chain/errors.js';
import { CANCELLED, ResponseOutcome, STALE, classifyFailure, isStaleRejection } from './outcome.js';
import { relayHeaders } from '../edge/response-headers.js';
import { sendError, sendLocalReply } from '../edge/local-reply.js';
import type { ResponseHead, ResponseHeadDecision } from '../request/stage-context.js';
import { canCarryTrailers, declaredTrailer, relayTrailers, trailerList, trailerObject, type UpstreamTrailers } from './trailers.js';
import { upstreamProtocol } from './protocol-choice.js';
import { relayUpgrade, type TunnelDeps } from './tunnel.js';

/** Receives an attempt's outcome. */
export type OutcomeCallback = (ctx: ProxyRequest, outcome: UpstreamOutcome) => void;

export interface Router {
  /**
   * Forwards `ctx` to `ctx.route` and calls `done` once the outcome is known: response headers arrived (the
   * response is then already being relayed; called synchronously), or the attempt failed before any (called
   * from a fresh microtask, so a re-run never starts inside the HTTP client's callbacks). Throws `ProxyError`
   * for an unusable route.
   */
  forward(ctx: ProxyRequest, done: OutcomeCallback): void;
}

export interface RouterOptions {
  readonly routeTimeoutMs: number;
  /** Where upgraded connections are accounted (without it, an upgrade request is forwarded as a plain one). */
  readonly tunnels?: TunnelDeps;
}

export class UndiciRouter implements Router {
  /** `h2c`: the workers' HTTP/2 sessions for gRPC (without them, gRPC goes as HTTP/1.1 too). */
  constructor(
    private readonly pools: UpstreamPools,
    private readonly counters: Counters,
    private readonly opts: RouterOptions,
    private readonly h2c?: UpstreamPools,
  ) {}

  forward(ctx: ProxyRequest, done: OutcomeCallback): void {
    const route = ctx.route;
    if (route === undefined) throw new ProxyError(ERRORS.NO_ROUTE);
    const h2c = this.h2c !== undefined && upstreamProtocol(ctx) === 'h2c';
    const pool = (h2c ? (this.h2c as UpstreamPools) : this.pools).get(route.address);
    if (pool === undefined) throw new ProxyError(ERRORS.BAD_ROUTE, `route address "${route.address}" is not a literal ip:port`);
    if (!pool.admit()) throw new ProxyError(ERRORS.UPSTREAM_OVERFLOW, `${route.address}: ${pool.limit} requests running or queued`);
    ctx.upstreamAddress = route.address;
    const upgrade = this.opts.tunnels === undefined ? undefined : ctx.upgrade;
    const attempt = new UpstreamAttempt(ctx, done, this.counters, pool, upgrade === undefined ? undefined : this.opts.tunnels);
    ctx.upstream = attempt;
    pool.pool.dispatch(
      {
        path: ctx.path,
        method: ctx.method,
        headers: (h2c ? [...ctx.headers.list, 'te', 'trailers'] : ctx.headers.list) as string[],
        body: (ctx.body === null ? null : ctx.body.forAttempt()) as Dispatcher.DispatchOptions['body'],
        headersTimeout: this.opts.routeTimeoutMs,
        idempotent: false,
        // An upgrade (WebSocket) handshake: undici sends Connection: upgrade and hands over the socket on a 101.
        upgrade: upgrade?.token ?? null,
        // Plain HTTP has no TLS server name; a value here spares undici deriving one from Host on every request.
        servername: route.address,
      } as Dispatcher.DispatchOptions,
      attempt,
    );
  }
}

const enum State {
  Waiting,
  /** Response headers arrived and a response-head transform is deciding; the upstream is paused. */
  Transforming,
  Relaying,
  Discarding,
  Done,
}

/** One attempt's undici handler (undici's native handler interface: no wrapping, raw header buffers). */
class UpstreamAttempt implements Dispatcher.DispatchHandler {
  #state = State.Waiting;
  /** undici has a connected socket for this attempt and began writing the request. */
  #started = false;
  /** undici wrote the whole request, body included (`onRequestSent`). */
  #written = false;
  #abort: ((err?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #onDrain: (() => void) | undefined;
  /** While transforming: body chunks that arrived anyway, and the trailers if the body already completed. */
  #held: { chunks: Buffer[]; complete: UpstreamTrailers | undefined } | undefined;
  readonly #res: ServerResponse;

  constructor(
    private readonly ctx: ProxyRequest,
    private done: OutcomeCallback | undefined,
    private readonly counters: Counters,
    private pool: WorkerPool | undefined,
    private readonly tunnels?: TunnelDeps,
  ) {
    this.#res = ctx.res;
  }

  /**
   * undici: the worker answered 101 to an upgrade request and handed over its socket. The tunnel keeps this
   * request's pool slot until it closes (an open tunnel counts against the worker's caps).
   */
  onUpgrade(status: number, raw: Buffer[] | string[] | null, socket: Duplex): void {
    this.counters.countUpstream(status);
    const intent = this.ctx.upgrade;
    const pool = this.pool;
    this.pool = undefined;
    this.#state = State.Done;
    const release = (): void => pool?.release();
    if (intent === undefined || this.tunnels === undefined) {
      socket.destroy();
      release();
      this.#settle(new ResponseOutcome(status, []));
      return;
    }
    this.#settle(relayUpgrade(this.ctx, intent, status, (raw ?? []) as Buffer[], socket as Socket, release, this.tunnels));
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
    this.pool?.release();
    this.pool = undefined;
  }

  /** Reports the outcome once: a response synchronously, anything else from a fresh microtask. */
  #settle(outcome: UpstreamOutcome): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    if (outcome.kind === 'response') {
      done(this.ctx, outcome);
      return;
    }
    const ctx = this.ctx;
    queueMicrotask(() => done(ctx, outcome));
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    this.#started = true;
    if (this.#state === State.Done || this.ctx.downstreamClosed) abort(new Error('client closed the request'));
  }

  /** undici: the request, body included, has been written to the socket. */
  onRequestSent(): void {
    this.#written = true;
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 100 Continue, 103 Early Hints: not relayed
    this.counters.countUpstream(status);
    if (isStaleRejection(status, raw)) {
      this.#state = State.Discarding;
      this.#settle(STALE);
      return true;
    }
    if (status < 300 && this.ctx.upgrade !== undefined && this.ctx.protocol === 'h2') {
      // An RFC 8441 client reads any 2xx as "tunnel open": a worker that did not switch protocols is an error here.
      this.#state = State.Done;
      this.#abort?.(new Error('upgrade not accepted by the worker'));
      sendError(this.ctx, ERRORS.UPGRADE_NOT_ACCEPTED, `worker answered ${status} to an extended CONNECT handshake`);
      this.#settle(new ResponseOutcome(ERRORS.UPGRADE_NOT_ACCEPTED.status, []));
      return false;
    }
    const res = this.#res;
    if (res.destroyed) {
      this.#state = State.Done;
      this.#abort?.(new Error('client closed the request'));
      this.#settle(new ResponseOutcome(status, []));
      return false;
    }
    const headers = relayHeaders(raw);
    const trailer = declaredTrailer(raw);
    if (trailer !== undefined && canCarryTrailers(res, this.ctx.method, status, headers)) headers.push('Trailer', trailer);
    this.#resume = resume;
    const transform = this.ctx.responseHeadTransform;
    if (transform !== undefined) {
      const decision = transform({ status, headers });
      if (typeof (decision as Partial<Promise<unknown>>).then === 'function') return this.#transform(decision as Promise<ResponseHeadDecision>);
      if ((decision as ResponseHeadDecision).kind === 'reply') return this.#transform(Promise.resolve(decision as ResponseHeadDecision));
      const { head } = decision as { head: ResponseHead };
      return this.#relay(res, head.status, head.headers);
    }
    return this.#relay(res, status, headers);
  }

  /** Writes the response head; the body follows as it arrives. */
  #relay(res: ServerResponse, status: number, headers: string[]): boolean {
    this.#state = State.Relaying;
    this.ctx.responseState = 'started';
    res.writeHead(status, headers);
    this.#settle(new ResponseOutcome(status, headers));
    return true;
  }

  /** Pauses the upstream until the response-head transform decides. */
  #transform(pending: Promise<ResponseHeadDecision>): boolean {
    this.#state = State.Transforming;
    this.#held = { chunks: [], complete: undefined };
    pending.then(
      (decision) => this.#decided(decision),
      (err: unknown) => this.#decided({ kind: 'reply', reply: { status: 500, details: `response head transform failed: ${(err as Error)?.message}` } }),
    );
    return false;
  }

  #decided(decision: ResponseHeadDecision): void {
    if (this.#state !== State.Transforming) return; // the upstream failed meanwhile
    const held = this.#held;
    this.#held = undefined;
    const res = this.#res;
    if (decision.kind === 'reply' || res.destroyed) {
      this.#state = State.Done;
      this.#abort?.(new Error(decision.kind === 'reply' ? 'replaced by a local reply' : 'client closed the request'));
      if (decision.kind === 'reply') sendLocalReply(this.ctx, decision.reply);
      this.#settle(new ResponseOutcome(decision.kind === 'reply' ? decision.reply.status : 0, []));
      return;
    }
    this.#relay(res, decision.head.status, decision.head.headers);
    let flowing = true;
    for (const chunk of held?.chunks ?? []) flowing = this.onData(chunk);
    if (held?.complete !== undefined) this.onComplete(held.complete);
    else if (flowing) this.#resume?.(); // otherwise 'drain' resumes
  }

  onData(chunk: Buffer): boolean {
    if (this.#state === State.Transforming) {
      this.#held?.chunks.push(chunk);
      return false;
    }
    if (this.#state !== State.Relaying) return true;
    if (this.#res.write(chunk)) return true;
    this.#onDrain ??= () => this.#resume?.();
    this.#res.once('drain', this.#onDrain);
    return false;
  }

  /** The upstream body is complete: relay its trailers, if any (node drops them unless the response is chunked). */
  onComplete(received: UpstreamTrailers): void {
    const trailers = trailerList(received);
    this.#release();
    if (this.#state === State.Transforming && this.#held !== undefined) {
      this.#held.complete = received;
      return;
    }
    const wasRelaying = this.#state === State.Relaying;
    this.#state = State.Done;
    if (!wasRelaying) return;
    if (trailers !== null && trailers.length > 0) {
      try {
        const pairs = relayTrailers(trailers);
        // node's HTTP/2 response takes an object (pairs would be read as fields named 0, 1, ...).
        this.#res.addTrailers(this.ctx.protocol === 'h2' ? trailerObject(pairs) : pairs);
      } catch (err) {
        this.ctx.details ??= `upstream trailers not relayed: ${(err as Error).message}`;
      }
    }
    this.#res.end();
  }

  onError(err: Error): void {
    this.#release();
    const state = this.#state;
    this.#state = State.Done;
    if (state === State.Waiting || state === State.Transforming) {
      if (this.ctx.downstreamClosed) {
        // We aborted the upstream because the client left: that is not the worker failing.
        this.#settle(CANCELLED);
        return;
      }
      const outcome = classifyFailure(err, this.#started, this.#written);
      if (outcome.kind === 'connect-failed') this.counters.upstreamConnectFailures++;
      else if (outcome.kind === 'reset') this.counters.upstreamResets++;
      else if (outcome.kind === 'identity-rejected') {
        this.counters.upstreamIdentityFailures++;
        this.ctx.log.warn(
          { worker: this.ctx.upstreamAddress, presented: outcome.presented, reason: outcome.reason },
          'upstream worker failed identity verification',
        );
      }
      this.#settle(outcome);
      return;
    }
    if (state === State.Relaying) {
      // The response had started: the client can only see it cut off.
      this.ctx.responseState = 'truncated';
      this.ctx.details ??= `upstream response aborted: ${(err as { code?: string }).code ?? err.message}`;
      this.#res.destroy();
    }
  }
}
