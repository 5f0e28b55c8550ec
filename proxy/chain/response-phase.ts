/**
 * The response phase: once the response head is known and before anything is written, each filter's `onResponse`
 * runs in reverse filter order on a `ChainResponse` — the upstream's final head, or a local reply (a later
 * filter's, ext_proc's, or one of the proxy's catalog errors). A filter may change the status and headers, or
 * return `reply(...)`, which replaces the response; the filters before it then see the reply. A filter that throws
 * or rejects replaces the response with 500 `PROXY_ERR_FILTER_FAILED` (a user filter that does not settle within
 * `--filter-timeout-ms`: 504 `PROXY_ERR_FILTER_TIMEOUT`); the phase goes on, so an error page can still be branded.
 *
 * Synchronous filters run without a promise; the first filter that returns one makes the rest asynchronous.
 */
import type { FilterResponse, ResponseResult } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';
import type { MultiValueLocalReply, ResponseHead, ResponseHeadDecision } from '../request/stage-context.js';
import type { FilterSet } from './filter-set.js';
import { ResponseHeaders } from './response-headers.js';
import { ERRORS, ProxyError, errorReply } from './errors.js';
import { withFilterTimeout } from './filter-timeout.js';
import { isPromise } from './promise.js';

/** The response a filter's `onResponse` sees (and may change). */
export class ChainResponse implements FilterResponse {
  readonly headers: ResponseHeaders;
  #status: number;

  private constructor(
    readonly source: 'upstream' | 'local',
    status: number,
    headers: string[],
    readonly errorCode: string | undefined,
    /** A local reply's body and log details (kept as they were). */
    readonly reply: MultiValueLocalReply | undefined,
  ) {
    this.#status = status;
    this.headers = new ResponseHeaders(headers);
  }

  static upstream(head: ResponseHead): ChainResponse {
    return new ChainResponse('upstream', head.status, head.headers, undefined, undefined);
  }

  static local(reply: MultiValueLocalReply, errorCode: string | undefined): ChainResponse {
    const list: string[] = [];
    for (const [name, value] of Object.entries(reply.headers ?? {})) {
      if (typeof value === 'string') list.push(name.toLowerCase(), value);
      else for (const v of value) list.push(name.toLowerCase(), v);
    }
    return new ChainResponse('local', reply.status, list, errorCode, reply);
  }

  get status(): number {
    return this.#status;
  }

  set status(value: number) {
    if (!Number.isInteger(value) || value < 200 || value > 599) throw new TypeError(`response status ${String(value)} is not a whole number from 200 to 599`);
    this.#status = value;
  }

  /** What the router (or the chain) writes: the head as changed, or the local reply. */
  decision(): ResponseHeadDecision {
    if (this.source === 'upstream') return { kind: 'continue', head: { status: this.#status, headers: this.headers.list } };
    return { kind: 'reply', reply: this.toLocalReply() };
  }

  toLocalReply(): MultiValueLocalReply {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of this.headers.entries()) {
      const seen = headers[name];
      headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    const reply = this.reply;
    return { status: this.#status, headers, ...(reply?.body !== undefined ? { body: reply.body } : {}), ...(reply?.details !== undefined ? { details: reply.details } : {}) };
  }
}

/** Runs `onResponse` of `set.filters[from]` down to `set.filters[0]`; the response as the filters left it. */
export function runResponsePhase(ctx: ProxyRequest, set: FilterSet, from: number, response: ChainResponse): ChainResponse | Promise<ChainResponse> {
  const filters = set.filters;
  for (let i = from; i >= 0; i--) {
    const f = filters[i];
    if (f?.onResponse === undefined) continue;
    let result: ResponseResult | Promise<ResponseResult>;
    try {
      result = f.onResponse(ctx, response);
    } catch (err) {
      response = failed(ctx, f.name, err);
      continue;
    }
    if (isPromise(result)) {
      const pending = i < set.userFilters ? withFilterTimeout(ctx, f.name, 'onResponse', result, set.timeoutMs) : result;
      const name = f.name;
      const current = response;
      return pending.then(
        (r) => runResponsePhase(ctx, set, i - 1, applied(current, r)),
        (err: unknown) => runResponsePhase(ctx, set, i - 1, failed(ctx, name, err)),
      );
    }
    response = applied(response, result);
  }
  return response;
}

function applied(response: ChainResponse, result: ResponseResult): ChainResponse {
  return result !== undefined && result !== null && result.kind === 'reply' ? ChainResponse.local(result.reply, undefined) : response;
}

/** A filter failed in its response phase: the response becomes the catalog's error for it. */
function failed(ctx: ProxyRequest, filter: string, err: unknown): ChainResponse {
  const spec = err instanceof ProxyError ? err.spec : ERRORS.FILTER_FAILED;
  if (!(err instanceof ProxyError)) ctx.log.error({ err, filter }, 'filter failed in onResponse');
  ctx.error = spec;
  return ChainResponse.local(errorReply(spec, `filter ${filter} failed in onResponse: ${(err as Error)?.message ?? String(err)}`), spec.code);
}
