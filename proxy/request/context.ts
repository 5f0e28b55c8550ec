/**
 * The per-request state behind the public `RequestContext`: the request snapshot taken at the ingress, the
 * forwarded headers, the body, the per-attempt slots a re-run clears, and what the access log and metrics need.
 * One instance lives for the whole client request, across re-runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RequestContext, Route } from '../api/filter.js';
import type { ForwardHeaders } from './headers.js';
import type { RequestBody } from './body.js';
import type { ProxyErrorSpec } from '../chain/errors.js';

export class ProxyRequest implements RequestContext {
  route: Route | undefined = undefined;
  #attempt = 0;
  #locals: Map<string | symbol, unknown> | undefined;
  #log: Logger | undefined;
  #abort: AbortController | undefined;

  /** Final status sent (0 until decided). */
  status = 0;
  /** The upstream address of the last attempt that reached the router. */
  upstreamAddress: string | undefined;
  /** Milliseconds spent in ext_proc (summed over attempts), for the access log. */
  extprocMs: number | undefined;
  /** Catalog entry when the proxy answered with an error of its own. */
  error: ProxyErrorSpec | undefined;
  /** Log-only explanation of a local answer or failure. */
  details: string | undefined;
  /** The upstream response broke after it had started (the client saw a truncated response). */
  aborted = false;
  /** Re-runs performed. */
  reruns = 0;
  /** The response is being relayed from upstream (or a local reply was written). */
  responding = false;
  /** The chain is done with this request (all request and upstream phases ran). */
  chainDone = false;
  /** Set by the chain while it runs the request. */
  onChainDone: ((ctx: ProxyRequest) => void) | undefined;
  /** The client response closed (finished, or abandoned by either side). */
  closed = false;
  /** onDone, counters and the access log ran. */
  finished = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly requestId: string,
    readonly method: string,
    readonly path: string,
    readonly authority: string,
    readonly scheme: 'http' | 'https',
    readonly remoteAddress: string,
    readonly headers: ForwardHeaders,
    /** Null when the request has no body. */
    readonly body: RequestBody | null,
    readonly startedAt: number,
    private readonly baseLog: Logger,
  ) {}

  get attempt(): number {
    return this.#attempt;
  }

  get locals(): Map<string | symbol, unknown> {
    return (this.#locals ??= new Map());
  }

  get log(): Logger {
    return (this.#log ??= this.baseLog.child({ requestId: this.requestId }));
  }

  /** Created on first use (only requests whose filters do asynchronous work pay for it). */
  get signal(): AbortSignal {
    return (this.#abort ??= new AbortController()).signal;
  }

  /** The client went away: abort whatever filters are waiting for. */
  abortFilters(): void {
    this.#abort?.abort(new Error('client closed the request'));
  }

  /** The upstream attempt in flight (to abort it when the client goes away). */
  upstream: { cancel(): void } | undefined;

  /** Before a re-run: clear the route and this attempt's header changes; attempt + 1. */
  nextAttempt(): void {
    this.route = undefined;
    this.headers.reset();
    this.#attempt++;
    this.reruns++;
  }

  /** The client is gone (or the response is already complete): nothing more can be sent. */
  get downstreamClosed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }
}
