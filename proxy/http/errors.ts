/**
 * The proxy's one error catalog: every answer the proxy makes up itself (rather than relaying the upstream's or
 * ext_proc's) comes from here. `text` is the plain-text body the client sees; it names the reason, never internal
 * details (those go to the access log).
 */

export interface ProxyErrorSpec {
  readonly code: string;
  readonly status: number;
  readonly text: string;
  /** Who failed: the client, an upstream worker, ext_proc, a filter, or the proxy itself. */
  readonly source: 'downstream' | 'upstream' | 'extproc' | 'filter' | 'internal';
  /** Headers every answer with this error carries (`retry-after` on the answers that shed load). */
  readonly headers?: Readonly<Record<string, string>>;
}

function spec(code: string, status: number, source: ProxyErrorSpec['source'], text: string, headers?: Readonly<Record<string, string>>): ProxyErrorSpec {
  return Object.freeze(headers === undefined ? { code, status, source, text } : { code, status, source, text, headers: Object.freeze({ ...headers }) });
}

/** What an answer that sheds load tells the client: try again in a second (the overload state is sampled every 250 ms). */
export const RETRY_AFTER = Object.freeze({ 'retry-after': '1' });

export const ERRORS = Object.freeze({
  NO_HOST: spec('PROXY_ERR_NO_HOST', 400, 'downstream', 'missing Host header'),
  DUPLICATE_HOST: spec('PROXY_ERR_DUPLICATE_HOST', 400, 'downstream', 'duplicate Host header'),
  INVALID_AUTHORITY: spec('PROXY_ERR_INVALID_AUTHORITY', 400, 'downstream', 'invalid authority'),
  INVALID_TARGET: spec('PROXY_ERR_INVALID_TARGET', 400, 'downstream', 'invalid request target'),
  MISDIRECTED: spec('PROXY_ERR_MISDIRECTED', 421, 'downstream', 'misdirected request: open a connection for this authority'),
  PATH_NOT_ABSOLUTE: spec('PROXY_ERR_ABSOLUTE_PATH_REJECTED', 404, 'downstream', 'request path must start with /'),
  NO_ROUTE: spec('PROXY_ERR_NO_ROUTE', 503, 'internal', 'no healthy upstream'),
  BAD_ROUTE: spec('PROXY_ERR_BAD_ROUTE', 503, 'extproc', 'no healthy upstream'),
  FILTER_FAILED: spec('PROXY_ERR_FILTER_FAILED', 500, 'filter', 'internal error in a request filter'),
  FILTER_TIMEOUT: spec('PROXY_ERR_FILTER_TIMEOUT', 504, 'filter', 'a request filter timed out'),
  BODY_TOO_LARGE: spec('PROXY_ERR_BODY_TOO_LARGE', 413, 'downstream', 'request body too large'),
  REQUEST_TIMEOUT: spec('PROXY_ERR_REQUEST_TIMEOUT', 408, 'downstream', 'request timeout: the request did not arrive in time'),
  EXTPROC_FAILED: spec('PROXY_ERR_EXTPROC_FAILED', 500, 'extproc', 'external processing failed'),
  EXTPROC_TIMEOUT: spec('PROXY_ERR_EXTPROC_TIMEOUT', 504, 'extproc', 'external processing timed out'),
  EXTPROC_BODY_TOO_LARGE: spec('PROXY_ERR_EXTPROC_BODY_TOO_LARGE', 413, 'downstream', 'request body too large for external processing'),
  EXTPROC_PROTOCOL: spec('PROXY_ERR_EXTPROC_PROTOCOL', 500, 'extproc', 'external processor sent an invalid response'),
  UPSTREAM_REQUEST_INVALID: spec('PROXY_ERR_UPSTREAM_REQUEST_INVALID', 500, 'internal', 'the upstream request could not be built'),
  UPSTREAM_TIMEOUT: spec('PROXY_ERR_UPSTREAM_TIMEOUT', 504, 'upstream', 'upstream request timeout'),
  UPSTREAM_CONNECT: spec('PROXY_ERR_UPSTREAM_CONNECT', 503, 'upstream', 'upstream connect error'),
  UPSTREAM_RESPONSE_INVALID: spec('PROXY_ERR_UPSTREAM_RESPONSE_INVALID', 502, 'upstream', 'the upstream response could not be relayed'),
  UPSTREAM_IDENTITY: spec('PROXY_ERR_UPSTREAM_IDENTITY', 502, 'upstream', 'upstream identity verification failed'),
  UPSTREAM_OVERFLOW: spec('PROXY_ERR_UPSTREAM_OVERFLOW', 503, 'upstream', 'upstream overflow: too many requests queued for the worker'),
  UPSTREAM_RESET: spec('PROXY_ERR_UPSTREAM_RESET', 503, 'upstream', 'upstream reset before response headers'),
  UPSTREAM_RESET_AFTER_SEND: spec(
    'PROXY_ERR_UPSTREAM_RESET_AFTER_SEND',
    502,
    'upstream',
    'upstream reset after the request was sent; not re-run because the method is not idempotent',
  ),
  STALE_EXHAUSTED: spec('PROXY_ERR_STALE_EXHAUSTED', 503, 'upstream', 'actor assignment stale: re-runs exhausted'),
  CONNECT_EXHAUSTED: spec('PROXY_ERR_CONNECT_EXHAUSTED', 503, 'upstream', 'upstream connect error: re-runs exhausted'),
  RESET_EXHAUSTED: spec('PROXY_ERR_RESET_EXHAUSTED', 503, 'upstream', 'upstream reset before response headers: re-runs exhausted'),
  STALE_NOT_REPLAYABLE: spec(
    'PROXY_ERR_STALE_NOT_REPLAYABLE',
    503,
    'upstream',
    'actor assignment stale and the request body is too large to replay; not re-run',
  ),
  UPSTREAM_NOT_REPLAYABLE: spec(
    'PROXY_ERR_UPSTREAM_NOT_REPLAYABLE',
    503,
    'upstream',
    'upstream connect error or reset and the request body is too large to replay; not re-run',
  ),
  UPGRADE_REFUSED: spec('PROXY_ERR_UPGRADE_REFUSED', 403, 'downstream', 'upgrade not allowed'),
  UPGRADE_NOT_ACCEPTED: spec('PROXY_ERR_UPGRADE_NOT_ACCEPTED', 502, 'upstream', 'the worker answered the upgrade without switching protocols'),
  CONNECT_NO_PORT: spec('PROXY_ERR_CONNECT_NO_PORT', 400, 'downstream', 'CONNECT target must be host:port'),
  CONNECT_NOT_ACTOR: spec('PROXY_ERR_CONNECT_NOT_ACTOR', 404, 'downstream', 'CONNECT target is not an actor host'),
  CONNECT_ONLY: spec('PROXY_ERR_CONNECT_ONLY', 405, 'downstream', 'this listener accepts CONNECT only'),
  DRAINING: spec('PROXY_ERR_DRAINING', 503, 'internal', 'the proxy is shutting down: no new upgrades or tunnels'),
  OVERLOADED: spec('PROXY_ERR_OVERLOADED', 503, 'internal', 'the proxy is overloaded: retry later', RETRY_AFTER),
  EXTPROC_QUEUE_TIMEOUT: spec('PROXY_ERR_EXTPROC_QUEUE_TIMEOUT', 503, 'internal', 'too many requests waiting for external processing: retry later', RETRY_AFTER),
  EXTPROC_QUEUE_FULL: spec('PROXY_ERR_EXTPROC_QUEUE_FULL', 503, 'internal', 'too many requests waiting for external processing: retry later', RETRY_AFTER),
  DOWNSTREAM_CLOSED: spec('PROXY_ERR_DOWNSTREAM_CLOSED', 499, 'downstream', 'client closed the request'),
  INTERNAL: spec('PROXY_ERR_INTERNAL', 500, 'internal', 'internal proxy error'),
});

/** An error carrying a catalog entry; `details` is for the log only. */
export class ProxyError extends Error {
  override readonly name = 'ProxyError';
  constructor(
    readonly spec: ProxyErrorSpec,
    readonly details?: string,
    options?: { cause?: unknown },
  ) {
    super(details ? `${spec.text}: ${details}` : spec.text, options);
  }
  get code(): string {
    return this.spec.code;
  }
  get status(): number {
    return this.spec.status;
  }
}

/** A catalog error as a local reply: its status, plain-text body and headers; `details` go to the access log only. */
export function errorReply(spec: ProxyErrorSpec, details?: string): { status: number; body: string; details: string; headers?: Readonly<Record<string, string>> } {
  const reply = { status: spec.status, body: `${spec.text}\n`, details: details ?? spec.code };
  return spec.headers === undefined ? reply : { ...reply, headers: spec.headers };
}
