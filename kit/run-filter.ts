/**
 * Runs one filter through one request as the proxy's chain would, against a fake request and a fake upstream
 * answer: `onRequest`; then, unless it answered locally, the upstream answer (`onUpstreamResponse`) and
 * `onResponse`; `onDone` last. What it returns is what the client would get and what would have gone upstream.
 */
import type { Filter, FilterFactory, FilterResult, LocalReply, RequestContext } from '../proxy/api/filter.js';
import { fakeFilterContext, fakeRequest, fakeResponse, type FakeRequestInit } from './fake-request.js';

/** The actor's answer, as the router would have seen it (default 200, no headers). */
export interface UpstreamAnswer {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RunFilterOptions {
  /** The request: a fake's fields (default: GET / for actor-000), or a context built with `fakeRequest()`. */
  readonly request?: FakeRequestInit | RequestContext;
  /** The upstream answer, when the request gets that far. */
  readonly upstream?: UpstreamAnswer;
  /** The filter's options, when `filter` is a factory. */
  readonly options?: Readonly<Record<string, unknown>>;
}

export interface FilterRun {
  /** `upstream`: the request went to the actor; `reply`: the filter answered in `onRequest` (nothing went upstream). */
  readonly outcome: 'upstream' | 'reply';
  /** The request as the filter left it: what went (or would have gone) upstream — `request.headers`, `request.path`. */
  readonly request: RequestContext;
  /** The status the client gets. */
  readonly status: number;
  /** The response headers the client gets (lower-case names; several values joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The filter's local reply, when it answered (in `onRequest`, or in place of the answer in `onResponse`). */
  readonly reply: LocalReply | undefined;
}

const isContext = (r: FakeRequestInit | RequestContext): r is RequestContext => typeof (r as RequestContext).readBody === 'function';

function headerRecord(entries: Iterable<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of entries) out[k] = out[k] === undefined ? v : `${out[k]}, ${v}`;
  return out;
}

function replyHeaders(reply: LocalReply): Record<string, string> {
  return headerRecord(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as [string, string]));
}

/** Runs `filter` (or the filter a factory makes, with `options`) through one request; see the module comment. */
export async function runFilter(filter: Filter | FilterFactory, opts: RunFilterOptions = {}): Promise<FilterRun> {
  const f = typeof filter === 'function' ? await filter(fakeFilterContext(opts.options)) : filter;
  const ctx = opts.request !== undefined && isContext(opts.request) ? opts.request : fakeRequest(opts.request);
  const done = (run: FilterRun): FilterRun => {
    f.onDone?.(ctx, { status: run.status });
    return run;
  };
  const first: FilterResult = (await f.onRequest?.(ctx)) ?? { kind: 'continue' };
  // A filter's own request-phase reply goes to the client as it is: the proxy does not hand it to its onResponse.
  if (first.kind === 'reply') return done({ outcome: 'reply', request: ctx, status: first.reply.status, headers: replyHeaders(first.reply), reply: first.reply });
  const status = opts.upstream?.status ?? 200;
  const headers = opts.upstream?.headers ?? {};
  f.onUpstreamResponse?.(ctx, { kind: 'response', status, headers });
  const response = fakeResponse({ status, headers });
  const after = await f.onResponse?.(ctx, response);
  if (after !== undefined && after.kind === 'reply') return done({ outcome: 'upstream', request: ctx, status: after.reply.status, headers: replyHeaders(after.reply), reply: after.reply });
  return done({ outcome: 'upstream', request: ctx, status: response.status, headers: headerRecord(response.headers.entries()), reply: undefined });
}
