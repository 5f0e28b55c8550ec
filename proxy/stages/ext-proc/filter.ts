/**
 * ext-proc: the slow path. For a request that no earlier filter routed (a cache miss, or no cache), it opens one
 * `Process` stream and sends the request headers as Envoy does (`translate.ts`), then applies the answer:
 * - `immediate_response` → a local reply with its status (default 200), headers and body;
 * - header mutations → set (`append` true adds, otherwise overwrites), remove; values from `raw_value`, falling
 *   back to `value`. Pseudo-headers, `host` and `x-envoy-*` cannot be changed (Envoy's default mutation rules);
 * - dynamic metadata `envoy.filters.listener.original_dst` / `local` → the route (a literal `ip:port`; anything
 *   else → 503 "no healthy upstream").
 * Failures as Envoy with `failure_mode_allow: false`: message timeout → 504, stream error → 500; with
 * `--failure-mode-allow` the request continues unprocessed (and, having no route, gets 503).
 * With `--extproc-response-headers send` the upstream response headers are sent on the same stream (observe
 * only: the response has already started). Every stream is closed by the time the request is done.
 *
 * Per-request state (the open stream, the time spent) lives in the request's typed `extProc` slot.
 */
import { performance } from 'node:perf_hooks';
import { CONTINUE, reply, type Filter, type FilterResult, type UpstreamOutcome } from '../../api/filter.js';
import { ERRORS, type ProxyErrorSpec } from '../../chain/errors.js';
import { isLiteralAddress } from '../../upstream/route-address.js';
import type { StageContext } from '../../request/stage-context.js';
import type { ExchangeResult, ExtProcClient } from './client.js';
import { metadataString, type ProcessingResponse } from './messages.js';
import { applyHeaderMutation, immediateReply, requestHeadersMessage, responseHeadersMessage } from './translate.js';
import { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE } from '../../../lib/wire-contract.js';

export const EXT_PROC_FILTER_NAME = 'ext-proc';

/** The route an answer publishes: `original_dst` / `local` in its dynamic metadata. */
export function originalDst(msg: ProcessingResponse): string | undefined {
  return metadataString(msg.dynamic_metadata, ORIGINAL_DST_NAMESPACE, ORIGINAL_DST_LOCAL_KEY);
}

export interface ExtProcFilterOptions {
  readonly client: Pick<ExtProcClient, 'open'>;
  readonly failureModeAllow: boolean;
  readonly sendResponseHeaders: boolean;
}

export function createExtProcFilter(opts: ExtProcFilterOptions): Filter<StageContext> {
  const onRequest = (ctx: StageContext): FilterResult | Promise<FilterResult> =>
    // Already routed (a cache hit), or the client already left (the chain ends it): no stream at all.
    ctx.route !== undefined || ctx.signal?.aborted === true ? CONTINUE : processRequest(ctx, opts);
  if (!opts.sendResponseHeaders) return { name: EXT_PROC_FILTER_NAME, onRequest }; // every stream closes in onRequest
  return { name: EXT_PROC_FILTER_NAME, onRequest, onUpstreamResponse: sendResponseHeaders, onRerun: closeStream, onDone: closeStream };
}

/** Opens a stream, sends the request headers, and applies the answer. */
async function processRequest(ctx: StageContext, opts: ExtProcFilterOptions): Promise<FilterResult> {
  closeStream(ctx); // a stream left from an earlier attempt
  const state = (ctx.extProc ??= { stream: undefined, elapsedMs: 0 });
  const stream = opts.client.open();
  if (opts.sendResponseHeaders) state.stream = stream;
  const startedAt = performance.now();
  let result: ExchangeResult;
  try {
    result = await stream.exchange(requestHeadersMessage(ctx, !ctx.hasBody), ctx.signal);
  } finally {
    state.elapsedMs += performance.now() - startedAt;
    if (!opts.sendResponseHeaders) stream.close();
  }
  const answer = result.kind === 'response' ? applyAnswer(ctx, result.response) : failureResult(result, opts.failureModeAllow);
  if (answer.kind === 'reply' || result.kind !== 'response') closeStream(ctx);
  return answer;
}

/** Applies a request_headers answer: an immediate response, header mutations, and the route from the metadata. */
function applyAnswer(ctx: StageContext, msg: ProcessingResponse): FilterResult {
  if (msg.immediate_response != null) return reply(immediateReply(msg.immediate_response));
  if (msg.request_headers == null) {
    return errorReply(ERRORS.EXTPROC_PROTOCOL, `expected a request_headers response, got ${msg.response ?? 'nothing'}`);
  }
  const invalid = applyHeaderMutation(ctx, msg.request_headers.response?.header_mutation);
  if (invalid !== undefined) return errorReply(ERRORS.EXTPROC_PROTOCOL, invalid);
  const local = originalDst(msg);
  if (local === undefined) return CONTINUE;
  if (!isLiteralAddress(local)) return errorReply(ERRORS.BAD_ROUTE, `original_dst "${local}" is not a literal ip:port`);
  ctx.route = { address: local, source: 'extproc' };
  return CONTINUE;
}

/** A stream that gave no answer, as Envoy with `failure_mode_allow` false (or true: continue unprocessed). */
function failureResult(result: Exclude<ExchangeResult, { kind: 'response' }>, failureModeAllow: boolean): FilterResult {
  switch (result.kind) {
    case 'timeout':
      return failureModeAllow ? CONTINUE : errorReply(ERRORS.EXTPROC_TIMEOUT, 'ext_proc_error_per-message_timeout_exceeded');
    case 'error':
      return failureModeAllow ? CONTINUE : errorReply(ERRORS.EXTPROC_FAILED, `ext_proc_error_gRPC_error_${result.code}{${result.details}}`);
    case 'closed': // the processor is done with this request: continue unprocessed
    case 'aborted': // the client went away: the chain notices
      return CONTINUE;
  }
}

function errorReply(spec: ProxyErrorSpec, details: string): FilterResult {
  return reply({ status: spec.status, body: `${spec.text}\n`, details: `${spec.code}: ${details}` });
}

/** Upstream phase with `--extproc-response-headers send`: the response headers on the kept stream, then close. */
function sendResponseHeaders(ctx: StageContext, outcome: UpstreamOutcome): void {
  const state = ctx.extProc;
  const stream = state?.stream;
  if (state === undefined || stream === undefined) return;
  if (outcome.kind !== 'response') return closeStream(ctx);
  state.stream = undefined;
  // Observe only: wait for the processor's answer to keep the conversation in order, then close.
  void stream.exchange(responseHeadersMessage(outcome.status, outcome.headers)).then(() => stream.close());
}

/** Closes the stream this request kept open, if any. */
function closeStream(ctx: StageContext): void {
  const state = ctx.extProc;
  const stream = state?.stream;
  if (state === undefined || stream === undefined) return;
  state.stream = undefined;
  stream.close();
}
