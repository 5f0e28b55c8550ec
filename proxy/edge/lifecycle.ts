/**
 * The one downstream request lifecycle. Every request — an HTTP/1.1 request, an HTTP/2 stream, a WebSocket
 * handshake over either protocol, a CONNECT — starts here (`begin`: the request context, with the ingress's header
 * hygiene and request-target rules, and with `--misdirected-421` the SNI rule: on a TLS connection, a request for
 * another authority than the connection's SNI is refused 421, `http/misdirected.ts`), runs here (`start`: the
 * chain, or the edge's own answer), and finishes here, once both its chain part is over and its exchange closed
 * (and its tunnel, if it became one): counters, duration, in-flight count, the access-log line and every filter's
 * `onDone`. The protocol engines (`http1-engine.ts`, `h2-engine.ts`, `connect-listener.ts`) only decide when a
 * request has its turn; none of them counts, times or logs a request itself.
 *
 * When the client goes away first, whatever still works for the request stops: its filters are aborted and its
 * upstream request is cancelled (never a failure that evicts a binding or re-runs). A request that never had its
 * turn (pipelined behind one whose connection closed) ends as 499 `PROXY_ERR_DOWNSTREAM_CLOSED`.
 *
 * The engines run each request inside the containment boundary (`lib/containment.ts`): an error the proxy did not
 * expect ends that request alone (`internalError`: 500 `PROXY_ERR_INTERNAL` with its request id when nothing was
 * sent yet, else a reset), and it still finishes here (counted, logged, in-flight count back down). On the path of a
 * request that throws nothing the boundary costs a try/catch and no allocation: the request's context is a field of
 * its exchange (`owner`), and its owner is looked up from the exchange in the catch (`contained`), not made ahead.
 */
import { performance } from 'node:perf_hooks';
import type { Attributes, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Chain } from '../chain/chain.js';
import type { TunnelHub } from '../tunnels/hub.js';
import type { Counters } from '../ops/stats.js';
import type { AccessLog } from '../ops/access-log.js';
import { accessLine, type LogFields as AccessLogFields } from '../ops/access-log-line.js';
import { ProxyRequest, type RequestContainment } from '../request/context.js';
import { RequestBody } from '../request/body.js';
import type { ReplayBudget } from '../request/replay-budget.js';
import type { BodyBudget } from '../request/body-budget.js';
import { ForwardHeaders } from '../http/header-list.js';
import type { DownstreamExchange } from '../http/exchange.js';
import { ERRORS, errorReply, type ProxyErrorSpec } from '../http/errors.js';
import { writeLocalReply } from '../http/local-reply.js';
import { isGrpcRequest } from '../http/grpc.js';
import { checkSni } from '../http/misdirected.js';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { resolveRequestTarget, type RequestTarget } from './resolve-target.js';
import { finalStatus } from './final-status.js';
import { endRequestTrace, startRequestTrace } from './request-spans.js';
import { nextRequestId } from '../request/request-id.js';
import type { ContainedOwner } from '../../lib/containment.js';
import type { ContainmentSite, ProxyContainment } from '../ops/containment.js';

/** The request head as an engine read it. */
export interface RequestHead {
  /** Where the request came in (the containment boundary's `where` for the callbacks its lifecycle registers). */
  readonly site: ContainmentSite;
  /** The request target as sent (origin-form, absolute-form, or a CONNECT's authority-form). */
  readonly url: string;
  readonly method: string;
  /** node's flat `[name, value, ...]`, in the HTTP/1.1 form (an HTTP/2 head is brought to it by `h2-request.ts`). */
  readonly rawHeaders: readonly string[];
  /** Whether a body follows (undefined: as the headers announce it). */
  readonly hasBody?: boolean;
  /** A CONNECT's target (`host:port`): the request's authority, taken as it is (the CONNECT listener checks it). */
  readonly connectTarget?: string;
  /**
   * The request came inside a CONNECT tunnel: its connection's TLS (on `--connect-tls-listen`) was opened for the
   * proxy, so its SNI names no origin.
   */
  readonly insideConnect?: boolean;
}

/** Fields of a request's access-log line that a built-in stage adds. */
export type LogFields = AccessLogFields<ProxyRequest>;

export interface LifecycleConfig {
  /** Lower-case names removed from every request: the internal headers plus `--strip-headers`. */
  readonly stripHeaders: readonly string[];
  /** `--xff-trusted-hops`. */
  readonly xffTrustedHops: number;
  /** `--max-replay-body-bytes`. */
  readonly maxReplayBodyBytes: number;
  /** `--misdirected-421 on`: a TLS request whose authority is not its connection's SNI is answered 421. */
  readonly misdirected421: boolean;
  /** `--request-id-trusted`: a client's `x-request-id` is kept (else a new one replaces it). */
  readonly requestIdTrusted: boolean;
  /** Normalised actor host suffix (the actor and atespace of a request's span). */
  readonly actorSuffix: string;
}

export interface LifecycleDeps {
  readonly config: LifecycleConfig;
  readonly chain: Chain;
  readonly counters: Counters;
  /**
   * Observes a finished request and how long it took, from its head to its end (the duration metric; what the
   * request was, e.g. its cache outcome, the process reads from the stages' state on `ctx`). Once per request.
   */
  readonly observe: (ctx: ProxyRequest, seconds: number) => void;
  readonly accessLog: AccessLog;
  /** Built-in stages' access-log fields. */
  readonly logFields: readonly LogFields[];
  readonly log: Logger;
  /** Tracing on: every request gets a trace (`request/trace.ts`); undefined: tracing off, nothing is done. */
  readonly tracer?: Tracer | undefined;
  /** What the built-in stages add to a request's server span (the cache outcome): read here, so the edge imports no stage. */
  readonly traceAttributes?: ((ctx: ProxyRequest) => Attributes | undefined) | undefined;
  /** The containment boundary every engine runs its requests in. */
  readonly guard: ProxyContainment;
  /** `--replay-buffer-budget-bytes`: where every request body takes the bytes it keeps for a replay (absent: no budget). */
  readonly replayBudget?: ReplayBudget | undefined;
  /**
   * `--body-inflight-budget-bytes`: where every request body reserves its share while it is in flight; a request
   * whose share does not fit is answered 503 `PROXY_ERR_OVERLOADED` at once (absent: no budget).
   */
  readonly bodyBudget?: BodyBudget | undefined;
  /** Overload (`shed-all`): why a new request is answered 503 `PROXY_ERR_OVERLOADED` at once, or undefined to serve it. */
  readonly shedRequest?: (() => string | undefined) | undefined;
}

/** What a protocol engine is built with: its config, the lifecycle its requests run through, and the tunnels. */
export interface EngineDeps<C> {
  readonly config: C;
  readonly lifecycle: RequestLifecycle;
  /** Upgrades and their tunnels (without it, the engine serves no upgrade). */
  readonly hub: TunnelHub | undefined;
}

/** A finished request's owner: an error after it finished has nothing left to end. */
const NOTHING_TO_END = (): void => undefined;


export class RequestLifecycle {
  readonly #deps: LifecycleDeps;
  readonly #strip: ReadonlySet<string>;
  readonly #onChainDone: (ctx: ProxyRequest) => void;
  readonly #tracer: Tracer | undefined;
  readonly #contain: RequestContainment = (ctx, where, err) => this.#deps.guard.caught(where, this.#ownerNow(ctx.exchange), err);
  /** Every exchange's close listener (one function for all: the exchange says which request). */
  readonly #exchangeClosed = (exchange: DownstreamExchange): void => {
    const ctx = exchange.owner;
    if (!(ctx instanceof ProxyRequest)) return; // finished already
    try {
      this.clientClosed(ctx);
    } catch (err) {
      this.#deps.guard.caught(ctx.site, this.#ownerNow(exchange), err);
    }
  };
  #inflight = 0;
  /** Draining: responses not yet started close their connection after them. */
  draining = false;
  /** Called whenever the in-flight count drops (the drain waits on it). */
  onSettled: (() => void) | undefined;

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
    this.#strip = new Set(deps.config.stripHeaders);
    this.#onChainDone = (ctx) => this.#maybeFinish(ctx);
    this.#tracer = deps.tracer;
  }

  get inflight(): number {
    return this.#inflight;
  }

  /** The containment boundary (`ops/containment.ts`) the engines start every request's work in. */
  get guard(): ProxyContainment {
    return this.#deps.guard;
  }

  /**
   * A request arrived on `exchange`: its context, with the ingress's refusal recorded (answered before any
   * filter, when the request has its turn).
   */
  begin(exchange: DownstreamExchange, head: RequestHead): ProxyRequest {
    const startedAt = performance.now();
    const { config, log } = this.#deps;
    const remote = exchange.remoteAddress;
    const scheme = exchange.encrypted ? 'https' : 'http';
    const sanitised = sanitiseRequestHeaders(head.rawHeaders, remote, scheme, this.#strip, config.xffTrustedHops, config.requestIdTrusted);
    const target: RequestTarget =
      head.connectTarget === undefined
        ? resolveRequestTarget(head.url, sanitised)
        : { kind: 'forward', path: head.connectTarget, authority: head.connectTarget, headers: sanitised.headers };
    const hasBody = head.hasBody ?? sanitised.hasBody;
    // A body in flight takes its share of the body budget until it has been received whole; no share, no body read.
    const bodyShare = hasBody && target.kind !== 'refuse' ? this.#deps.bodyBudget?.admit(sanitised.contentLength) : undefined;
    const bodyRefused = hasBody && target.kind !== 'refuse' && this.#deps.bodyBudget !== undefined && bodyShare === undefined;
    const body = hasBody && !bodyRefused ? new RequestBody(exchange.requestBody, config.maxReplayBodyBytes, this.#deps.replayBudget, bodyShare) : null;
    const ctx = new ProxyRequest({
      exchange,
      requestId: sanitised.requestId,
      method: head.method,
      path: target.path,
      authority: target.authority,
      scheme,
      remoteAddress: remote,
      headers: new ForwardHeaders(target.headers),
      body,
      startedAt,
      log,
      contain: this.#contain,
      site: head.site,
    });
    // From here the request is accounted: whatever happens to it, `#finish` takes it out again.
    this.#inflight++;
    this.#deps.counters.requestsInFlight++;
    exchange.owner = ctx;
    exchange.onClose(this.#exchangeClosed);
    if (this.#tracer !== undefined) ctx.trace = startRequestTrace(this.#tracer, ctx);
    if (target.kind === 'refuse') this.refuse(ctx, target.error, target.details);
    else if (config.misdirected421 && exchange.encrypted && head.connectTarget === undefined && head.insideConnect !== true) {
      const sni = checkSni(target.authority, exchange.connectionInfo.serverName);
      if (sni.kind === 'misdirected') this.refuse(ctx, ERRORS.MISDIRECTED, `authority ${sni.host} is not the connection's SNI ${sni.sni}`);
    }
    const shed = ctx.error !== undefined ? undefined : bodyRefused ? 'the request body budget is spent' : this.#deps.shedRequest?.();
    if (shed !== undefined) {
      this.refuse(ctx, ERRORS.OVERLOADED, shed);
      exchange.closeAfterResponse();
    }
    return ctx;
  }

  /**
   * Work on `exchange` threw at `where` (an engine's catch): its owner is found now, and ends. The engines' hot
   * paths call this from a plain try/catch, so nothing is made for the boundary unless something throws.
   */
  contained(where: ContainmentSite, exchange: DownstreamExchange, err: unknown): void {
    this.#deps.guard.caught(where, this.#ownerNow(exchange), err);
  }

  /** `contained`'s owner as a function, for the boundary's `run` and `wrap` (the paths that are not per hit). */
  ownerOf(exchange: DownstreamExchange): () => ContainedOwner {
    return () => this.#ownerNow(exchange);
  }

  /**
   * Who ends when work on `exchange` throws: its request while it runs (`internalError`); nothing once it finished
   * (the log line still names it); else the bare exchange (answered 500 with a new request id, or reset).
   */
  #ownerNow(exchange: DownstreamExchange): ContainedOwner {
    const held = exchange.owner;
    if (held instanceof ProxyRequest) return { requestId: held.requestId, fail: (err) => this.internalError(held, err) };
    if (typeof held === 'string') return { requestId: held, fail: NOTHING_TO_END };
    const requestId = nextRequestId();
    return { requestId, fail: (err) => this.#failBare(exchange, requestId, err) };
  }

  /**
   * Something the proxy did not expect threw while working on this request: it ends here, alone — answered 500
   * `PROXY_ERR_INTERNAL` when nothing was sent yet (and its connection closed after it), reset otherwise; its
   * filters, upstream request and tunnel stop. It still finishes as every request does.
   */
  internalError(ctx: ProxyRequest, err: unknown): void {
    if (ctx.clientState === 'finished') return;
    const details = `internal error: ${err instanceof Error ? err.message : String(err)}`;
    ctx.error = ERRORS.INTERNAL;
    ctx.details = details;
    const exchange = ctx.exchange;
    if (!exchange.headSent && !exchange.gone) {
      exchange.closeAfterResponse();
      const written = writeLocalReply(exchange, errorReply(ERRORS.INTERNAL), { grpc: isGrpcRequest(ctx.headers), requestId: ctx.requestId });
      if (written.kind === 'written') ctx.bytesOut += written.bytes;
      else exchange.abortResponse();
    } else if (!exchange.complete) {
      exchange.abortResponse();
    }
    ctx.abortFilters(details);
    ctx.upstream?.cancel();
    const tunnel = ctx.tunnel;
    if (tunnel !== undefined && !tunnel.closed) tunnel.close('internal');
    ctx.phase = 'answered';
    this.#maybeFinish(ctx);
  }

  /** An exchange whose request context was never made: 500 with a new request id, or a reset. */
  #failBare(exchange: DownstreamExchange, requestId: string, _err: unknown): void {
    this.#deps.counters.countResponse(500);
    if (!exchange.headSent && !exchange.gone) {
      exchange.closeAfterResponse();
      const written = writeLocalReply(exchange, errorReply(ERRORS.INTERNAL), { grpc: false, requestId });
      if (written.kind === 'written') return;
    }
    exchange.abortResponse();
  }

  /** Records why the edge answers this request itself (the first reason recorded wins). */
  refuse(ctx: ProxyRequest, spec: ProxyErrorSpec, details: string): void {
    if (ctx.error !== undefined) return;
    ctx.error = spec;
    ctx.details = details;
  }

  /** Runs a request that has its turn (unless its client left while it waited): the edge's own answer, or the chain. */
  start(ctx: ProxyRequest): void {
    if (ctx.clientState !== 'open') return;
    if (this.draining) ctx.exchange.closeAfterResponse();
    if (ctx.error !== undefined) return this.answer(ctx, ctx.error, ctx.details);
    this.#deps.chain.run(ctx, this.#onChainDone);
  }

  /** The edge answers with a catalog error (and `headers`), without the chain. */
  answer(ctx: ProxyRequest, spec: ProxyErrorSpec, details: string | undefined, headers?: Readonly<Record<string, string>>): void {
    ctx.error = spec;
    const written = writeLocalReply(ctx.exchange, { ...errorReply(spec, details), ...(headers === undefined ? {} : { headers }) }, { grpc: isGrpcRequest(ctx.headers), requestId: ctx.requestId });
    if (written.kind === 'written') ctx.bytesOut += written.bytes;
    if (written.kind === 'written' && written.invalid !== undefined) ctx.details = written.invalid;
    else if (details !== undefined) ctx.details = details;
    this.answered(ctx);
  }

  /** The edge is done with a request it handled without the chain (answered it, or opened its tunnel). */
  answered(ctx: ProxyRequest): void {
    ctx.phase = 'answered';
    this.#maybeFinish(ctx);
  }

  /**
   * The request did not arrive within `--request-timeout-ms` (an HTTP/2 stream's body trickling in): answered 408
   * when nothing was sent yet (cut off otherwise), and whatever still works for it stops.
   */
  requestTimedOut(ctx: ProxyRequest, timeoutMs: number): void {
    if (ctx.clientState !== 'open' || ctx.exchange.gone) return;
    ctx.error = ERRORS.REQUEST_TIMEOUT;
    ctx.details = `the request was not complete after ${timeoutMs} ms`;
    const written = writeLocalReply(ctx.exchange, errorReply(ERRORS.REQUEST_TIMEOUT, ctx.details), { grpc: isGrpcRequest(ctx.headers), requestId: ctx.requestId });
    if (written.kind === 'not-written') ctx.exchange.abortResponse();
    else ctx.bytesOut += written.bytes;
    ctx.abortFilters(ctx.details);
    ctx.upstream?.cancel();
    if (ctx.phase === 'waiting') this.answered(ctx);
  }

  /**
   * The client side of a request is over (its exchange closed, or its connection did): stop whatever still works
   * for it, and finish once the chain is done too. A pipelined request that never had its turn ends as 499.
   */
  clientClosed(ctx: ProxyRequest): void {
    if (ctx.clientState !== 'open') return;
    ctx.clientState = 'closed';
    if (ctx.phase === 'waiting') {
      ctx.error = ERRORS.DOWNSTREAM_CLOSED;
      ctx.details = 'client closed the connection before this pipelined request had its turn';
      ctx.phase = 'answered';
    } else if (!ctx.exchange.complete) {
      // Marked gone first (node may not have done so yet when the socket's 'close' comes first), so the aborted
      // upstream request is seen as `cancelled` — never a reset that evicts or re-runs.
      ctx.exchange.abortResponse();
      ctx.abortFilters();
      ctx.upstream?.cancel();
    }
    this.#maybeFinish(ctx);
  }

  /** Finishes once the chain's part is over, the exchange closed, and the tunnel (if any) closed. */
  #maybeFinish(ctx: ProxyRequest): void {
    if (ctx.phase !== 'answered' || ctx.clientState !== 'closed') return;
    const tunnel = ctx.tunnel;
    if (tunnel !== undefined && !tunnel.closed) {
      tunnel.onClose(this.#deps.guard.wrap('tunnel', this.ownerOf(ctx.exchange), () => this.#maybeFinish(ctx)));
      return;
    }
    this.#finish(ctx);
  }

  /** Counters, duration, in-flight, access log, every filter's onDone: once per request. */
  #finish(ctx: ProxyRequest): void {
    if (ctx.clientState === 'finished') return;
    ctx.clientState = 'finished';
    // Only its id stays on the exchange: node may hold a finished response a while, and the request must not stay
    // reachable with it (it would survive young-generation collections and be promoted: see close-listeners.ts).
    ctx.exchange.owner = ctx.requestId;
    try {
      this.#account(ctx);
    } finally {
      this.#inflight--;
      this.#deps.counters.requestsInFlight--;
      this.onSettled?.();
    }
  }

  #account(ctx: ProxyRequest): void {
    const { counters, chain, accessLog } = this.#deps;
    const end = finalStatus(ctx);
    // A request body the upstream did not read completely: the connection cannot carry another request.
    if (ctx.body !== null && ctx.body.started && !ctx.body.complete) ctx.exchange.discardUnreadBody();
    ctx.body?.release();
    ctx.status = end.status;
    counters.countResponse(end.status);
    const durationMs = performance.now() - ctx.startedAt;
    this.#deps.observe(ctx, durationMs / 1000);
    if (ctx.trace !== undefined) endRequestTrace(ctx.trace, ctx, end.status, this.#deps.config.actorSuffix, this.#deps.traceAttributes?.(ctx));
    if (accessLog.enabled) accessLog.write(accessLine(ctx, { status: end.status, truncated: end.truncated, durationMs }, this.#deps.logFields));
    chain.done(ctx, end.status, end.error);
  }
}
