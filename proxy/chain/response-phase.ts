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
import type { ResponseResult } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';
import { ERRORS, ProxyError, errorReply } from '../http/errors.js';
import type { FilterSet } from './filter-set.js';
import { ChainResponse } from './chain-response.js';
import { filterResultProblem } from './filter-result.js';
import { withFilterTimeout } from './filter-timeout.js';
import { isPromise } from './promise.js';

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
        (r) => runResponsePhase(ctx, set, i - 1, applied(ctx, name, current, r)),
        (err: unknown) => runResponsePhase(ctx, set, i - 1, failed(ctx, name, err)),
      );
    }
    response = applied(ctx, f.name, response, result);
  }
  return response;
}

/** The response after a filter's `onResponse` answered `result` (nothing or CONTINUE: as it is; a reply: replaced). */
function applied(ctx: ProxyRequest, filter: string, response: ChainResponse, result: ResponseResult): ChainResponse {
  if (result === undefined) return response;
  const problem = filterResultProblem(result);
  if (problem !== undefined) return failed(ctx, filter, new TypeError(problem));
  return result.kind === 'reply' ? ChainResponse.local(result.reply, undefined) : response;
}

/** A filter failed in its response phase: the response becomes the catalog's error for it. */
function failed(ctx: ProxyRequest, filter: string, err: unknown): ChainResponse {
  const spec = err instanceof ProxyError ? err.spec : ERRORS.FILTER_FAILED;
  if (!(err instanceof ProxyError)) ctx.log.error({ err, filter }, 'filter failed in onResponse');
  ctx.error = spec;
  return ChainResponse.local(errorReply(spec, `filter ${filter} failed in onResponse: ${(err as Error)?.message ?? String(err)}`), spec.code);
}
