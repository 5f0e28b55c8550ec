/**
 * The per-request state behind the public `RequestContext`: the request snapshot taken at the ingress, the
 * forwarded headers, the body, the per-attempt slots a re-run clears, the built-in stages' typed slots, and what
 * the access log and metrics need. One instance lives for the whole client request, across re-runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ClientProtocol, ReadBodyOptions, Route } from '../api/filter.js';
import type { ForwardHeaders } from './headers.js';
import type { RequestBody } from './body.js';
import type { ResponseHeadTransform, StageContext } from './stage-context.js';
import { ERRORS, ProxyError, type ProxyErrorSpec } from '../chain/errors.js';
import type { FilterSet } from '../chain/filter-set.js';
import { isOriginForm } from './origin-form.js';
import type { CacheRequestState } from '../stages/actor-cache/request-state.js';
import type { ExtProcRequestState } from '../stages/ext-proc/request-state.js';
import type { UpgradeIntent } from './upgrade-intent.js';

/** What the ingress knows about a request when it creates its context (`log`: the process logger). */
export type ProxyRequestInit = Pick<ProxyRequest, 'req' | 'res' | 'requestId' | 'method' | 'path' | 'authority' | 'scheme' | 'remoteAddress' | 'headers' | 'body' | 'startedAt'> & {
  readonly log: Logger;
  /** Default `http/1.1`. */
  readonly protocol?: ClientProtocol;
};

/** Called once per request when the chain is done with it (the response is being relayed, or was answered). */
export type ChainDone = (ctx: ProxyRequest) => void;

/** Where the chain is with a request. */
export type ChainState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly done: ChainDone }
  /** All request and upstream phases ran (or the ingress answered before the chain). */
  | { readonly kind: 'done' };

export const CHAIN_IDLE: ChainState = Object.freeze({ kind: 'idle' });
export const CHAIN_DONE: ChainState = Object.freeze({ kind: 'done' });

/**
 * How far the client response got: `started` once headers are relayed from upstream or a local reply is written;
 * `truncated` when it broke after it had started (the client saw a cut-off response).
 */
export type ResponseState = 'unsent' | 'started' | 'truncated';

/**
 * The client side: `closed` once the response closed (finished, or abandoned by either side); `finished` once
 * counters, every filter's onDone and the access log ran.
 */
export type ClientState = 'open' | 'closed' | 'finished';

export class ProxyRequest implements StageContext {
  // The request as the ingress saw it (documented on `RequestContext`), plus node's objects for it. An HTTP/2
  // stream comes as node's compatibility objects (`edge/h2-response.ts`), which offer every member used here.
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request line as forwarded: ext_proc may rewrite it (`:method`, `:path`) for one attempt. */
  method: string;
  #path: string;
  readonly #ingressMethod: string;
  readonly #ingressPath: string;
  readonly authority: string;
  readonly scheme: 'http' | 'https';
  readonly protocol: ClientProtocol;
  readonly remoteAddress: string;
  readonly requestId: string;
  readonly headers: ForwardHeaders;
  /** Null when the request has no body. */
  readonly body: RequestBody | null;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** The process logger (the request's own child logger is made on first use). */
  readonly #baseLog: Logger;

  route: Route | undefined = undefined;
  #attempt = 0;
  #locals: Map<string | symbol, unknown> | undefined;
  #log: Logger | undefined;
  #abort: AbortController | undefined;

  actorCache: CacheRequestState | undefined = undefined;
  extProc: ExtProcRequestState | undefined = undefined;

  chainState: ChainState = CHAIN_IDLE;
  responseState: ResponseState = 'unsent';
  clientState: ClientState = 'open';

  /** Final status sent (0 until decided). */
  status = 0;
  /** The upstream address of the last attempt that reached the router. */
  upstreamAddress: string | undefined;
  /** Catalog entry when the proxy answered with an error of its own. */
  error: ProxyErrorSpec | undefined;
  /** Log-only explanation of a local answer or failure. */
  details: string | undefined;
  /** The upstream attempt in flight (to abort it when the client goes away). */
  upstream: { cancel(): void } | undefined;
  /** An upgrade (WebSocket) handshake the router forwards as one (`edge/upgrade.ts`); undefined for other requests. */
  upgrade: UpgradeIntent | undefined = undefined;
  /** Set by a stage that must see (and may change) the response head before it is written; cleared before a re-run. */
  responseHeadTransform: ResponseHeadTransform | undefined = undefined;
  /** The filters this request runs through, from its start to its end (a reload never changes them mid-request). */
  filterSet: FilterSet | undefined = undefined;

  constructor(init: ProxyRequestInit) {
    this.req = init.req;
    this.res = init.res;
    this.method = init.method;
    this.#path = init.path;
    this.#ingressMethod = init.method;
    this.#ingressPath = init.path;
    this.authority = init.authority;
    this.scheme = init.scheme;
    this.protocol = init.protocol ?? 'http/1.1';
    this.remoteAddress = init.remoteAddress;
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.body = init.body;
    this.startedAt = init.startedAt;
    this.#baseLog = init.log;
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
    if (read === undefined) throw new ProxyError(ERRORS.BODY_TOO_LARGE, `request body over ${limit} bytes`);
    return read;
  }

  get attempt(): number {
    return this.#attempt;
  }

  get hasBody(): boolean {
    return this.body !== null;
  }

  /** For user filters only: built-in stages keep their state in their typed slots. */
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
    this.responseHeadTransform = undefined;
    this.headers.reset();
    this.#attempt++;
  }

  /** The client is gone (or the response is already complete): nothing more can be sent. */
  get downstreamClosed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }
}
