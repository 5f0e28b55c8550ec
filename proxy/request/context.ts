/**
 * The per-request state behind the public `RequestContext`: the request snapshot taken at the ingress, the
 * downstream exchange it came on, the forwarded headers, the body, the per-attempt slots a re-run clears, the
 * slots the built-in stages and the chain declare (`slots.ts`), and what the access log and metrics need. One
 * instance lives for the whole client request, across re-runs.
 */
import type { Logger } from 'pino';
import type { ClientProtocol, ReadBodyOptions, RequestContext, Route } from '../api/filter.js';
import type { DownstreamExchange } from '../http/exchange.js';
import type { ForwardHeaders } from '../http/header-list.js';
import { ERRORS, ProxyError, type ProxyErrorSpec } from '../http/errors.js';
import { isOriginForm } from '../http/origin-form.js';
import type { RequestBody } from './body.js';
import { RequestSlot, type HasSlots } from './slots.js';
import type { OpenedTunnel, UpgradeIntent } from './upgrade.js';
import type { RequestTrace } from './trace.js';
import type { ContainmentSite } from '../ops/containment.js';

/** What the edge knows about a request when it creates its context (`log`: the process logger). */
export type ProxyRequestInit = Pick<
  ProxyRequest,
  'exchange' | 'requestId' | 'method' | 'path' | 'authority' | 'scheme' | 'remoteAddress' | 'headers' | 'body' | 'startedAt'
> & {
  readonly log: Logger;
  /** The containment boundary for this request (the lifecycle's); without it, `internalError` rethrows. */
  readonly contain?: RequestContainment;
  /** Where the request came in (default `http1-request`). */
  readonly site?: ContainmentSite;
};

/** Ends `ctx` alone after an error the proxy did not expect, counted at `where` (`ops/containment.ts`). */
export type RequestContainment = (ctx: ProxyRequest, where: ContainmentSite, err: unknown) => void;

/**
 * Where a request is: `waiting` (its turn on the connection has not come), `in-chain` (filters, router, re-runs),
 * `answered` (the chain's part is over, or the edge answered before the chain).
 */
export type RequestPhase = 'waiting' | 'in-chain' | 'answered';

/**
 * The client side: `closed` once the exchange closed (finished, or abandoned by either side); `finished` once
 * counters, every filter's onDone and the access log ran.
 */
export type ClientState = 'open' | 'closed' | 'finished';

export class ProxyRequest implements RequestContext, HasSlots {
  /** The client side of this request (an HTTP/1.1 response, an HTTP/2 stream, an upgrade or CONNECT socket). */
  readonly exchange: DownstreamExchange;
  /** The request line as forwarded: ext_proc may rewrite it (`:method`, `:path`) for one attempt. */
  method: string;
  #path: string;
  readonly #ingressMethod: string;
  readonly #ingressPath: string;
  readonly authority: string;
  readonly scheme: 'http' | 'https';
  readonly remoteAddress: string;
  readonly requestId: string;
  readonly headers: ForwardHeaders;
  /** Null when the request has no body. */
  readonly body: RequestBody | null;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** The process logger (the request's own child logger is made on first use). */
  readonly #baseLog: Logger;
  /** The state the chain and the built-in stages keep for this request (`slots.ts`). */
  readonly slots: unknown[];
  readonly #contain: RequestContainment | undefined;
  /** Where the request came in: the containment boundary's `where` for the work its chain does. */
  readonly site: ContainmentSite;

  route: Route | undefined = undefined;
  #attempt = 0;
  #locals: Map<string | symbol, unknown> | undefined;
  #log: Logger | undefined;
  #abort: AbortController | undefined;

  phase: RequestPhase = 'waiting';
  clientState: ClientState = 'open';

  /** The status the request was finished with (0 until then). */
  status = 0;
  /** The upstream address of the last attempt that reached the router. */
  upstreamAddress: string | undefined;
  /** Catalog entry when the proxy answered with an error of its own. */
  error: ProxyErrorSpec | undefined;
  /** Log-only explanation of a local answer or failure. */
  details: string | undefined;
  /** The upstream attempt in flight (to abort it when the client goes away). */
  upstream: { cancel(): void } | undefined;
  /** An upgrade (WebSocket) handshake the router forwards as one; undefined for other requests. */
  upgrade: UpgradeIntent | undefined = undefined;
  /** The tunnel this request became (an upgrade after the worker's 101, or a CONNECT). */
  tunnel: OpenedTunnel | undefined = undefined;
  /** This request's trace: only while tracing is on (`trace.ts`); undefined otherwise, and nothing else is done. */
  trace: RequestTrace | undefined = undefined;
  /** Response body bytes written to the client (a tunnel counts its own). */
  bytesOut = 0;
  /** When the last attempt was handed to the upstream pool (`performance.now()`; 0: never). */
  upstreamStartedAt = 0;
  /** Milliseconds from that hand-over to the worker's response head (undefined: no head arrived). */
  upstreamMs: number | undefined = undefined;

  constructor(init: ProxyRequestInit) {
    this.exchange = init.exchange;
    this.method = init.method;
    this.#path = init.path;
    this.#ingressMethod = init.method;
    this.#ingressPath = init.path;
    this.authority = init.authority;
    this.scheme = init.scheme;
    this.remoteAddress = init.remoteAddress;
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.body = init.body;
    this.startedAt = init.startedAt;
    this.#baseLog = init.log;
    this.slots = new Array(RequestSlot.count);
    this.#contain = init.contain;
    this.site = init.site ?? 'http1-request';
  }

  /** Whether a containment boundary ends this request when its work throws (a request made by the lifecycle). */
  get contained(): boolean {
    return this.#contain !== undefined;
  }

  /**
   * Work for this request threw where the proxy did not expect it (a callback of its upstream answer, its ext_proc
   * stream, its tunnel): the request ends alone (500 or a reset), logged and counted at `where`.
   */
  internalError(where: ContainmentSite, err: unknown): void {
    if (this.#contain === undefined) throw err;
    this.#contain(this, where, err);
  }

  /** The protocol the client spoke. */
  get protocol(): ClientProtocol {
    return this.exchange.protocol;
  }

  /** Path and query as forwarded; assigning checks origin-form (see `RequestContext.path`). */
  get path(): string {
    return this.#path;
  }

  set path(value: string) {
    if (typeof value !== 'string' || !isOriginForm(value)) throw new TypeError(`path ${JSON.stringify(value)} is not origin-form`);
    this.#path = value;
  }

  get originalPath(): string {
    return this.#ingressPath;
  }

  /** See `RequestContext.readBody`: shares the body's replay buffer, so the body is still forwarded and replayable. */
  async readBody(options: ReadBodyOptions): Promise<Uint8Array> {
    const body = this.body;
    if (body === null) return Buffer.alloc(0);
    const limit = Math.min(options.limit, body.limit);
    const read = await body.buffered(limit);
    if (read === undefined && body.overBudget) throw new ProxyError(ERRORS.OVERLOADED, 'the replay budget (--replay-buffer-budget-bytes) has no room for the body');
    if (read === undefined) throw new ProxyError(ERRORS.BODY_TOO_LARGE, `request body over ${limit} bytes`);
    return read;
  }

  get attempt(): number {
    return this.#attempt;
  }

  get hasBody(): boolean {
    return this.body !== null;
  }

  /** For user filters only: built-in stages keep their state in their own slots. */
  get locals(): Map<string | symbol, unknown> {
    return (this.#locals ??= new Map());
  }

  get log(): Logger {
    return (this.#log ??= this.#baseLog.child({ requestId: this.requestId }));
  }

  /**
   * Created on first use (only requests whose filters do asynchronous work pay for it); already aborted when the
   * client left before anyone asked for it.
   */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.clientState !== 'open') this.#abort.abort(new Error('client closed the request'));
    }
    return this.#abort.signal;
  }

  /** The client went away (or a filter timed out): abort whatever filters are waiting for. */
  abortFilters(reason = 'client closed the request'): void {
    this.#abort?.abort(new Error(reason));
  }

  /** Before a re-run: clear the route and this attempt's header and request-line changes; attempt + 1. */
  nextAttempt(): void {
    this.route = undefined;
    this.method = this.#ingressMethod;
    this.#path = this.#ingressPath;
    this.headers.reset();
    this.#attempt++;
  }

  /** The client is gone (or the response is already complete): nothing more can be sent. */
  get downstreamClosed(): boolean {
    return this.exchange.gone;
  }
}
