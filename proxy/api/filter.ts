/**
 * The proxy's public filter API. A request runs through user filters (in `--filter` order), then actor-cache
 * (when on), then ext-proc, then the router; the response head runs back through the filters' `onResponse` in
 * reverse order before anything is written to the client. The chain (`chain/chain.ts`) is the single owner of the
 * same-request re-run loop: filters decide, they never loop themselves.
 *
 * A filter module is an ES module whose default export is a `FilterFactory`.
 */
import type { Logger } from 'pino';

/** Request headers as forwarded upstream: lower-case names; a filter may read and change them. */
export interface HeaderMap {
  get(name: string): string | undefined;
  /** All values of a header (e.g. several `x-forwarded-for` lines). */
  getAll(name: string): readonly string[];
  has(name: string): boolean;
  /** Replaces every value of `name`. */
  set(name: string, value: string): void;
  /** Adds one more value of `name`. */
  append(name: string, value: string): void;
  delete(name: string): void;
  entries(): IterableIterator<[string, string]>;
}

/** Where the router sends the request: always a literal `ip:port` that came from ext_proc metadata or the cache. */
export interface Route {
  /** Literal `ip:port` (IPv6 in brackets). */
  readonly address: string;
  /** Who chose it. */
  readonly source: 'cache' | 'extproc' | 'apiserver';
  /** The cache generation of the binding used (for generation-guarded eviction); absent when not from the cache. */
  readonly generation?: number;
}

/** One piece of a streamed local reply body: bytes, the end (with trailers, maybe), or a failure. */
export type StreamedPiece =
  | { readonly kind: 'data'; readonly data: Uint8Array }
  | { readonly kind: 'end'; readonly trailers?: Readonly<Record<string, string>> }
  /** The source broke: the client's response is reset (it cannot be told otherwise once the head is out). */
  | { readonly kind: 'error'; readonly details: string };

/**
 * A local reply body produced while it is written (ext_proc's `streamed_immediate_response`): the proxy writes the
 * head at once, then asks for one piece at a time, writing each (and waiting for the client to take it) before it
 * asks again. There is no `content-length`: HTTP/1.1 clients get it chunked.
 */
export interface StreamedBody {
  readonly kind: 'streamed';
  next(): Promise<StreamedPiece>;
  /** The body will not be written to its end (the client left, or another reply replaced this one). Idempotent. */
  cancel(): void;
}

/** A response produced by the proxy itself instead of the upstream (Envoy's sendLocalReply). */
export interface LocalReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array | StreamedBody;
  /** Why: goes to the access log, never to the client. */
  readonly details?: string;
}

export type FilterResult =
  | { readonly kind: 'continue' }
  | { readonly kind: 'reply'; readonly reply: LocalReply };

/** Why the chain re-runs a request from the top. */
export type RerunReason = 'stale' | 'connect' | 'reset';

/** What the router saw from the upstream; filters observe it in `onUpstreamResponse`. */
export type UpstreamOutcome =
  /** The upstream answered and the answer is (being) relayed to the client. */
  | { readonly kind: 'response'; readonly status: number; readonly headers: Readonly<Record<string, string | string[]>> }
  /** The worker said the actor is not there: 421 with `x-ate-assignment-stale: true`. Never relayed. */
  | { readonly kind: 'stale'; readonly status: 421 }
  /**
   * Nothing was sent: refused, connect timeout, unreachable. `ejected`: the proxy did not connect at all, because
   * the worker's address was down (outlier detection: another attempt's connect failed first); `code` is then
   * `UPSTREAM_EJECTED`.
   */
  | { readonly kind: 'connect-failed'; readonly code: string; readonly ejected?: true }
  /** The connection broke before any response headers. `requestWritten`: the request may have reached the actor. */
  | { readonly kind: 'reset'; readonly requestWritten: boolean; readonly code: string }
  /**
   * The worker's certificate failed verification (chain, expiry, or no URI SAN with the SPIFFE prefix): nothing
   * was sent. `presented`: what the worker presented; `reason`: why it was refused. Never re-runs.
   */
  | { readonly kind: 'identity-rejected'; readonly presented: string; readonly reason: string }
  /** No response headers within the route timeout. */
  | { readonly kind: 'timeout' }
  /**
   * The HTTP client refused to build the upstream request from this request (its method, path or headers, e.g.
   * as a filter changed them): nothing was sent and no worker was involved, so it never evicts and never re-runs.
   */
  | { readonly kind: 'invalid-request'; readonly code: string }
  /**
   * The client went away before the upstream answered and the proxy abandoned the upstream request. It says
   * nothing about the worker: no eviction, no re-run (a client can never make the proxy evict a binding).
   */
  | { readonly kind: 'cancelled' };

/** The re-run reason an outcome gives (the reason `onRerun` is called with), or undefined: it is not re-run. */
export function rerunReason(outcome: UpstreamOutcome): RerunReason | undefined {
  switch (outcome.kind) {
    case 'stale':
      return 'stale';
    case 'connect-failed':
      return 'connect';
    case 'reset':
      return 'reset';
    default:
      return undefined;
  }
}

/** The protocol a client spoke to the ingress (ALPN names). */
export type ClientProtocol = 'http/1.1' | 'h2';

/** Per-request state a filter sees. One context lives for the whole client request, across re-runs. */
export interface RequestContext {
  /** `x-request-id` (the client's, or generated). */
  readonly requestId: string;
  readonly method: string;
  /**
   * Path and query as forwarded upstream, origin-form (an absolute-form target's path and query). Assigning it
   * rewrites the upstream request's path for this attempt (a re-run starts from `originalPath` again); the value
   * must be origin-form (`/` then visible ASCII, no `#`), otherwise the assignment throws a `TypeError`.
   */
  path: string;
  /** Path and query as the client sent them (never changes). */
  readonly originalPath: string;
  /** Host, or an absolute-form target's authority (which replaces Host). */
  readonly authority: string;
  readonly scheme: 'http' | 'https';
  /** The protocol the client spoke: `http/1.1` (HTTP/1.0 included) or `h2` (over TLS, or h2c). */
  readonly protocol: ClientProtocol;
  readonly remoteAddress: string;
  /**
   * Headers to forward upstream (hop-by-hop and forgeable internal headers already removed). `host` cannot be
   * set or removed (a `TypeError`): the request's authority — what the cache, ext_proc and the worker key on — is
   * decided once at the ingress.
   */
  readonly headers: HeaderMap;
  /** 0 for the first pass, then 1, 2, ... for each re-run. */
  readonly attempt: number;
  /** Set by actor-cache or ext-proc; the router refuses to forward without one. Cleared before a re-run. */
  route: Route | undefined;
  /** Per-filter scratch space for `--filter` modules that survives re-runs (key by your filter's name or a symbol). */
  readonly locals: Map<string | symbol, unknown>;
  readonly log: Logger;
  /**
   * Aborted when the client goes away before the response is complete: pass it to any asynchronous work a
   * filter does (optional: absent in contexts that cannot be aborted, e.g. unit-test fakes).
   */
  readonly signal?: AbortSignal;
  /**
   * Reads the whole request body (opt-in; a filter that never calls it costs nothing): resolves with the body
   * (empty when there is none), which is still forwarded upstream and still replayable on a re-run. A body larger
   * than `limit` bytes (or than `--max-replay-body-bytes`, whichever is smaller) rejects with an error that, left
   * uncaught, answers 413 `PROXY_ERR_BODY_TOO_LARGE`. Call it from `onRequest` only.
   */
  readBody(options: ReadBodyOptions): Promise<Uint8Array>;
}

export interface ReadBodyOptions {
  /** The most bytes the filter accepts. */
  readonly limit: number;
}

/**
 * The response as the client will get it, handed to `onResponse` before anything is written: the final upstream
 * response head, or a local reply (a later filter's, ext_proc's, or one of the proxy's own errors). A worker's
 * stale 421 is never a response (the proxy re-runs the request instead).
 */
export interface FilterResponse {
  /** `upstream`: the worker's answer; `local`: made by the proxy (a filter, ext_proc, or the error catalog). */
  readonly source: 'upstream' | 'local';
  /** Assigning changes the status sent; it must be a whole number from 200 to 599 (`TypeError` otherwise). */
  status: number;
  /**
   * The response headers. `set`/`append` throw a `TypeError` for an invalid name or value, a hop-by-hop header,
   * `content-length`, or one of the proxy's internal headers; names compare case-insensitively.
   */
  readonly headers: HeaderMap;
  /** For the proxy's own errors: the catalog code (e.g. `PROXY_ERR_UPSTREAM_CONNECT`); undefined otherwise. */
  readonly errorCode: string | undefined;
}

/** What `onResponse` decides: keep the (possibly changed) response, or replace it with a local reply. */
export type ResponseResult = FilterResult | void;

/**
 * A filter. `Ctx` and `Res` are what it is handed: `RequestContext` and `FilterResponse` for `--filter` modules;
 * the built-in stages are written against the proxy's own context and response, which add what only they use.
 */
export interface Filter<Ctx extends RequestContext = RequestContext, Res extends FilterResponse = FilterResponse> {
  readonly name: string;
  /** Request phase: read/change headers, set a route, or answer locally. */
  onRequest?(ctx: Ctx): FilterResult | Promise<FilterResult>;
  /**
   * Response phase, in reverse filter order, once per client request, when the response head is known and nothing
   * is written yet: change `response.status` or `response.headers`, or return `reply(...)` to answer with a local
   * reply instead (the filters before this one then see that reply). Runs for upstream answers and for local
   * replies alike (those made by later filters, ext_proc and the proxy's error catalog); a filter whose own
   * `onRequest` answered locally, or that the request never reached, is not called.
   */
  onResponse?(ctx: Ctx, response: Res): ResponseResult | Promise<ResponseResult>;
  /** Upstream phase (observe only), in reverse filter order, once per attempt that reached the router. */
  onUpstreamResponse?(ctx: Ctx, outcome: UpstreamOutcome): void;
  /** Called on every filter before the chain re-runs the request (actor-cache evicts here). */
  onRerun?(ctx: Ctx, reason: RerunReason): void;
  /** Always called once when the client request is finished. */
  onDone?(ctx: Ctx, result: { readonly status: number; readonly error?: Error }): void;
}

/** What a filter factory receives when the proxy loads it. */
export interface FilterContext {
  readonly log: Logger;
  /** The proxy's configured actor DNS suffix, for filters that parse actor hosts. */
  readonly actorSuffix: string;
  /** The filter's `options` from the config file (`filters: [{ module, options }]`); empty when none were given. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * Runs the module's named `offload` export (an `OffloadFunction`, `api/offload.ts`) on the proxy's filter worker
   * pool (`--filter-workers`), or inline when there is none or its queue is full. Undefined when the module has no
   * `offload` export.
   */
  readonly offload?: Offloader;
}

/* Offloaded work (`api/offload.ts` has the helpers that apply it). */

/** A local reply decided off the main loop (a `LocalReply` without a streamed body: it must cross threads). */
export interface OffloadReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Why: goes to the access log, never to the client. */
  readonly details?: string;
}

/** What the offloaded function decides: continue (with header changes), or answer locally. Structured-cloneable. */
export type OffloadDecision =
  | {
      readonly kind: 'continue';
      /** Request headers to set (each replaces every value of its name), after `removeHeaders`. */
      readonly setHeaders?: Readonly<Record<string, string>>;
      /** Request headers to remove. */
      readonly removeHeaders?: readonly string[];
    }
  | { readonly kind: 'reply'; readonly reply: OffloadReply };

/**
 * A filter module's named `offload` export: runs in the worker pool (or inline). It must be pure: it sees only
 * its input (no request, no logger), and its module is imported again in every worker thread.
 */
export type OffloadFunction<I = unknown> = (input: I) => OffloadDecision | Promise<OffloadDecision>;

export interface OffloadOptions {
  /**
   * Buffers moved to the worker instead of copied; they are unusable afterwards. Never transfer the buffer
   * `ctx.readBody` returned (the proxy keeps it to forward and replay the body): transfer `transferableCopy(body)`.
   */
  readonly transfer?: readonly ArrayBuffer[];
}

/**
 * Runs the module's `offload` export on `input` for the request `ctx`. Resolves with its decision; rejects with
 * what it threw (the request is answered 500 `PROXY_ERR_FILTER_FAILED`, as for a filter that throws), when its
 * worker thread died, or when the request no longer waits for it (the client left, the filter timed out).
 */
export type Offloader = <I>(ctx: RequestContext, input: I, options?: OffloadOptions) => Promise<OffloadDecision>;

/** The default export of a `--filter` module. */
export type FilterFactory = (context: FilterContext) => Filter | Promise<Filter>;

export const CONTINUE: FilterResult = Object.freeze({ kind: 'continue' });

export function reply(reply: LocalReply): FilterResult {
  return { kind: 'reply', reply };
}

export function isStreamedBody(body: LocalReply['body']): body is StreamedBody {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'streamed';
}
