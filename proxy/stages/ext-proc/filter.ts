/**
 * ext-proc: the slow path. For a request that no earlier filter routed (a cache miss, or no cache), one `Process`
 * stream, phases as Envoy's `processing_mode` says (`settings.ts`; per host suffix as `plan.ts`):
 * 1. request headers (SEND by default), as Envoy sends them (`translate.ts`);
 * 2. the request body when `request_body_mode` is BUFFERED (read into the replay buffer; over its limit → 413);
 * 3. the upstream response headers when `response_header_mode` is SEND: this stage's response hook (`onResponse`,
 *    the first of the response phase: it is the last filter) sends the head to ext_proc before anything is written, so
 *    mutations apply as in Envoy.
 * Each answer: `immediate_response` → a local reply; the expected `*_headers`/`request_body` → header mutations
 * (`mutation.ts`), a body mutation, dynamic metadata kept per receiving namespace (`metadata.ts`), a
 * `mode_override` when `allow_mode_override`; a `streamed_immediate_response` to the request headers with body mode
 * NONE → a local reply streamed as it arrives (`streamed-reply.ts`; in other modes or phases it is refused as
 * spurious, with the reason); any other answer is spurious. The route is metadata
 * `envoy.filters.listener.original_dst` / `local` (a literal `ip:port`; anything else → 503).
 * Failures as Envoy: message timeout → 504, stream error or spurious answer → 500, an invalid mutation → 500
 * always; with `failure_mode_allow` the request continues unprocessed — except once the processor has been sent
 * the request body (it may have been deciding on it), where a failure fails closed. The processor ending the
 * stream with OK → continue without it. Every stream is closed by the time the request is done.
 *
 * Before a stream is opened: while the proxy is overloaded (`shed-misses` and above) the request is answered 503
 * `PROXY_ERR_OVERLOADED`; otherwise it takes one of the `--extproc-max-streams` slots for its request phase,
 * waiting its turn in the queue when all are taken (`stream-queue.ts`: 503 `PROXY_ERR_EXTPROC_QUEUE_TIMEOUT` or
 * `PROXY_ERR_EXTPROC_QUEUE_FULL` when it cannot have one). A stream kept afterwards for the response headers, or
 * for a streamed immediate response's body, holds no slot.
 */
import { CONTINUE, reply, type FilterResult, type LocalReply, type ResponseResult } from '../../api/filter.js';
import type { ChainFilter } from '../../chain/filter-set.js';
import type { ChainResponse } from '../../chain/chain-response.js';
import { ERRORS, ProxyError, type ProxyErrorSpec } from '../../http/errors.js';
import { isLiteralAddress } from '../../http/route-address.js';
import type { ProxyRequest } from '../../request/context.js';
import type { Span } from '@opentelemetry/api';
import type { MessageResult, ExtProcClient } from './client.js';
import { Conversation } from './conversation.js';
import type { CommonResponse, ProcessingResponse } from './messages.js';
import { metadataString, ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE } from './metadata.js';
import { overrideMode } from './mode-override.js';
import { applyMutation, ResponseHeadTarget } from './mutation.js';
import { planFor, type RequestPlan } from './plan.js';
import { EXT_PROC_SLOT } from './request-state.js';
import { RequestLineTarget } from './request-line-target.js';
import type { ExtProcSettings, ProcessingMode } from './settings.js';
import { immediateReply, requestBodyMessage, requestHeadersMessage, responseHeadersMessage } from './translate.js';
import { isGrpcRequest } from '../../http/grpc.js';
import { streamedReply } from './streamed-reply.js';
import { roundTripWithRetries, type StreamRetries } from './retrying-round-trip.js';
import type { Admission, StreamQueue } from './stream-queue.js';

export const EXT_PROC_FILTER_NAME = 'ext-proc';
export { ORIGINAL_DST_NAMESPACE };

export interface ExtProcFilterOptions {
  readonly client: Pick<ExtProcClient, 'open'>;
  readonly settings: ExtProcSettings;
  /** Retrying a stream that could not be opened, within the request's re-run budget (absent: never retried, no budget sent). */
  readonly retries?: StreamRetries;
  /** Overload and the bound on misses in flight (absent: neither). */
  readonly admission?: SlowPathAdmission;
}

/** What a request must pass before its stream is opened. */
export interface SlowPathAdmission {
  /** The overload manager: why a miss is shed now (503 `PROXY_ERR_OVERLOADED`), or undefined. */
  readonly shedMiss?: () => string | undefined;
  /** `--extproc-max-streams` slots and their queue. */
  readonly queue?: StreamQueue;
  /** `--extproc-queue-timeout-ms`. */
  readonly queueTimeoutMs: number;
  /** `--rerun-budget-ms`: a request waits in the queue no longer than what is left of it. */
  readonly budgetMs: number;
}

export function createExtProcFilter(opts: ExtProcFilterOptions): ChainFilter {
  const onRequest = (ctx: ProxyRequest): FilterResult | Promise<FilterResult> =>
    // Already routed (a cache hit), or the client already left (the chain ends it): no stream at all.
    ctx.route !== undefined || ctx.signal.aborted ? CONTINUE : processRequest(ctx, opts);
  const s = opts.settings;
  // The response phase only when response headers may be sent: without it the hit path runs no response phase.
  if (anyMode(s, (m) => m.responseHeaderMode === 'SEND') || s.allowModeOverride) {
    return { name: EXT_PROC_FILTER_NAME, onRequest, onResponse, onRerun: closeStream, onDone: closeStream };
  }
  // A streamed immediate response reads the rest of its stream while it is written: the request's end closes it.
  if (anyMode(s, (m) => m.requestHeaderMode === 'SEND')) return { name: EXT_PROC_FILTER_NAME, onRequest, onRerun: closeStream, onDone: closeStream };
  return { name: EXT_PROC_FILTER_NAME, onRequest }; // every stream closes in onRequest
}

/** Whether the processing mode, or a per-host override of it, satisfies `test`. */
function anyMode(s: ExtProcSettings, test: (mode: Partial<ProcessingMode>) => boolean): boolean {
  return test(s.processingMode) || s.perHost.some((h) => h.override.kind === 'overrides' && test(h.override.processingMode));
}

/** How one answer left the request: go on to the next phase (maybe with an overridden mode), or stop processing. */
type Step = { readonly kind: 'next'; readonly mode: ProcessingMode; readonly common: CommonResponse } | { readonly kind: 'done'; readonly result: FilterResult };

const done = (result: FilterResult): Step => ({ kind: 'done', result });

/** Runs the request phases on a new stream and applies the answers. */
async function processRequest(ctx: ProxyRequest, opts: ExtProcFilterOptions): Promise<FilterResult> {
  const { settings } = opts;
  const plan = planFor(ctx.authority, settings);
  if (plan === undefined) return CONTINUE; // ExtProcPerRoute.disabled: no stream
  closeStream(ctx); // a stream left from an earlier attempt
  const admission = opts.admission;
  if (admission === undefined) return runRequestPhases(ctx, opts, plan);
  const shed = admission.shedMiss?.();
  if (shed !== undefined) throw new ProxyError(ERRORS.OVERLOADED, shed);
  const queue = admission.queue;
  if (queue === undefined) return runRequestPhases(ctx, opts, plan);
  const waitMs = Math.min(admission.queueTimeoutMs, admission.budgetMs - (performance.now() - ctx.startedAt));
  const slot = await queue.acquire(waitMs, ctx.signal);
  if (slot.kind !== 'admitted') return refused(slot, queue);
  try {
    return await runRequestPhases(ctx, opts, plan);
  } finally {
    slot.release();
  }
}

/** A request the queue gave no slot: its client left (the chain notices), or 503 with the reason. */
function refused(slot: Exclude<Admission, { kind: 'admitted' }>, queue: StreamQueue): FilterResult {
  const { maxStreams, maxWaiting } = queue.limits;
  switch (slot.kind) {
    case 'aborted':
      return CONTINUE;
    case 'full':
      throw new ProxyError(ERRORS.EXTPROC_QUEUE_FULL, `${maxWaiting} requests already wait for one of ${maxStreams} ext_proc streams (--extproc-max-streams)`);
    case 'timeout':
      throw new ProxyError(ERRORS.EXTPROC_QUEUE_TIMEOUT, `waited ${Math.round(slot.waitedMs)} ms for one of ${maxStreams} ext_proc streams (--extproc-max-streams; the wait is bounded by --extproc-queue-timeout-ms and the re-run budget)`);
  }
}

/** The request phases on a new stream, and their answers applied. */
async function runRequestPhases(ctx: ProxyRequest, opts: ExtProcFilterOptions, plan: RequestPlan): Promise<FilterResult> {
  const { settings } = opts;
  const state = EXT_PROC_SLOT.get(ctx) ?? EXT_PROC_SLOT.set(ctx, { stream: undefined, elapsedMs: 0, responsePhase: undefined });
  const retries = opts.retries;
  const open =
    retries === undefined
      ? (span?: Span) => opts.client.open(span === undefined ? undefined : { span })
      : (span?: Span) => opts.client.open({ budgetMs: budgetLeftMs(ctx, retries.policy.budgetMs, settings.messageTimeoutMs), span });
  const conv = new Conversation(ctx, open, settings, state, plan.mode.requestBodyMode);
  const step = await requestPhases(ctx, conv, plan, retries);
  if (step.kind === 'done') {
    conv.close();
    return step.result.kind === 'reply' ? step.result : routeFromMetadata(ctx, conv);
  }
  if (step.mode.responseHeaderMode === 'SEND') state.responsePhase = { run: (response) => responsePhase(ctx, conv, plan, response), close: () => conv.close() };
  else conv.close();
  return routeFromMetadata(ctx, conv);
}

/**
 * What the processor is told it has for this request (`actor-edge-resume-budget-ms`): the rest of the re-run
 * budget, and never more than the message timeout (an answer later than that would be a 504 here anyway).
 */
function budgetLeftMs(ctx: ProxyRequest, budgetMs: number, messageTimeoutMs: number): number {
  return Math.max(0, Math.min(messageTimeoutMs, budgetMs - (performance.now() - ctx.startedAt)));
}

async function requestPhases(ctx: ProxyRequest, conv: Conversation, plan: RequestPlan, retries: StreamRetries | undefined): Promise<Step> {
  let mode = plan.mode;
  const common: CommonResponse = {};
  if (mode.requestHeaderMode === 'SEND') {
    const message = requestHeadersMessage(ctx, !ctx.hasBody, conv.settings.forwardRules);
    const result = await roundTripWithRetries(ctx, conv, message, plan.failureModeAllow, retries);
    const step = answerStep(ctx, conv, result, 'request_headers', mode, plan.failureModeAllow);
    if (step.kind === 'done') return step;
    mode = step.mode;
  }
  const body = ctx.body ?? null;
  if (mode.requestBodyMode === 'BUFFERED' && body !== null) {
    let buffered: Buffer | undefined;
    try {
      buffered = await body.buffered();
    } catch {
      return done(CONTINUE); // the client's body broke: the chain notices the client is gone
    }
    if (buffered === undefined && body.overBudget) return done(errorReply(ERRORS.OVERLOADED, 'the replay budget (--replay-buffer-budget-bytes) has no room for the body'));
    if (buffered === undefined) return done(errorReply(ERRORS.EXTPROC_BODY_TOO_LARGE, 'request body over --max-replay-body-bytes'));
    const result = await conv.roundTrip(requestBodyMessage(buffered));
    // The processor has seen the body: a failure from here on fails closed.
    const step = answerStep(ctx, conv, result, 'request_body', mode, false);
    if (step.kind === 'done') return step;
    const invalid = applyBodyMutation(ctx, step.common);
    if (invalid !== undefined) return done(errorReply(ERRORS.EXTPROC_PROTOCOL, invalid));
  }
  return { kind: 'next', mode, common };
}

/** Applies one request-path answer of kind `expected`. */
function answerStep(
  ctx: ProxyRequest,
  conv: Conversation,
  result: MessageResult,
  expected: 'request_headers' | 'request_body',
  mode: ProcessingMode,
  failureModeAllow: boolean,
): Step {
  if (result.kind !== 'response') return done(failureResult(result, failureModeAllow));
  const msg = result.response;
  if (msg.streamed_immediate_response != null && expected === 'request_headers') return done(streamed(conv, msg, mode, failureModeAllow));
  const answer = classify(ctx, conv, msg, expected);
  if (answer.kind !== 'common') return done(answer.kind === 'reply' ? reply(answer.reply) : spuriousResult(answer.details, failureModeAllow));
  conv.receive(msg);
  const mutation = applyMutation(new RequestLineTarget(ctx), answer.common.header_mutation, conv.settings.mutationRules);
  conv.noteMutation(mutation);
  if (mutation.error !== undefined) return done(errorReply(ERRORS.EXTPROC_PROTOCOL, mutation.error));
  const next = expected === 'request_headers' && conv.settings.allowModeOverride ? overrideMode(mode, msg.mode_override) : mode;
  return { kind: 'next', mode: next, common: answer.common };
}

type Answer =
  | { readonly kind: 'common'; readonly common: CommonResponse }
  | { readonly kind: 'reply'; readonly reply: LocalReply }
  | { readonly kind: 'spurious'; readonly details: string };

/** An answer as the phase expecting `expected` sees it: its CommonResponse, an immediate response, or spurious. */
function classify(ctx: ProxyRequest, conv: Conversation, msg: ProcessingResponse, expected: 'request_headers' | 'request_body' | 'response_headers'): Answer {
  if (msg.immediate_response != null) return immediate(ctx, conv, msg);
  if (msg.streamed_immediate_response != null) return { kind: 'spurious', details: `streamed_immediate_response answers only the request headers, not ${expected}` };
  // proto-loader names the oneof member in `response`; a hand-built message (tests, fakes) may only set the field.
  const got = msg.response ?? Object.keys(msg).find((k) => (msg as Readonly<Record<string, unknown>>)[k] != null);
  if (got === expected || msg[expected] != null) return { kind: 'common', common: msg[expected]?.response ?? {} };
  return { kind: 'spurious', details: `expected a ${expected} response, got ${got ?? 'nothing'}` };
}

/** A streamed immediate response: the streamed reply, or refused (unsupported here: spurious; malformed: 500). */
function streamed(conv: Conversation, msg: ProcessingResponse, mode: ProcessingMode, failureModeAllow: boolean): FilterResult {
  const s = streamedReply(conv, msg, mode);
  if (s.kind === 'reply') return reply(s.reply);
  return s.kind === 'unsupported' ? spuriousResult(s.details, failureModeAllow) : errorReply(ERRORS.EXTPROC_PROTOCOL, s.details);
}

/** A stream that gave no answer, as Envoy with `failure_mode_allow` false (or true: continue unprocessed). */
function failureResult(result: Exclude<MessageResult, { kind: 'response' }>, failureModeAllow: boolean): FilterResult {
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

/** An answer of the wrong kind (Envoy >= 1.35 fails closed unless `failure_mode_allow`, which stops processing). */
function spuriousResult(details: string, failureModeAllow: boolean): FilterResult {
  return failureModeAllow ? CONTINUE : errorReply(ERRORS.EXTPROC_PROTOCOL, details);
}

function errorLocalReply(spec: ProxyErrorSpec, details: string): LocalReply {
  const reply = { status: spec.status, body: `${spec.text}\n`, details: `${spec.code}: ${details}` };
  return spec.headers === undefined ? reply : { ...reply, headers: spec.headers };
}

function errorReply(spec: ProxyErrorSpec, details: string): FilterResult {
  return reply(errorLocalReply(spec, details));
}

/** A BUFFERED body answer's body mutation; an error text when it cannot apply (Envoy answers 500). */
function applyBodyMutation(ctx: ProxyRequest, answer: CommonResponse): string | undefined {
  const m = answer.body_mutation;
  const body = ctx.body ?? null;
  if (m == null || body === null || m.mutation === undefined) return undefined;
  let replacement: Buffer;
  if (m.mutation === 'body') replacement = Buffer.from(m.body ?? []);
  else if (m.mutation === 'clear_body') {
    if (m.clear_body !== true) return undefined;
    replacement = Buffer.alloc(0);
  } else return `body mutation ${m.mutation} is not supported in BUFFERED mode`;
  const length = ctx.headers.get('content-length');
  if (length !== undefined && length !== String(replacement.length)) {
    return `content-length ${length} does not match the mutated body (${replacement.length} bytes)`;
  }
  body.replace(replacement);
  return undefined;
}

/** The route from the kept `original_dst` metadata, if any. */
function routeFromMetadata(ctx: ProxyRequest, conv: Conversation): FilterResult {
  const local = metadataString(conv.metadata, ORIGINAL_DST_NAMESPACE, ORIGINAL_DST_LOCAL_KEY);
  if (local === undefined) return CONTINUE;
  if (!isLiteralAddress(local)) {
    closeStream(ctx);
    return errorReply(ERRORS.BAD_ROUTE, `original_dst "${local}" is not a literal ip:port`);
  }
  ctx.route = { address: local, source: 'extproc' };
  return CONTINUE;
}

/**
 * Response phase (this stage's `onResponse`): when the request kept its stream for the response headers, the
 * upstream's head goes to the processor and its answer decides what the client gets — the head as mutated, or an
 * immediate response. A local reply (the proxy's own answer) is never sent to the processor: the stream closes.
 */
function onResponse(ctx: ProxyRequest, response: ChainResponse): ResponseResult | Promise<ResponseResult> {
  const state = EXT_PROC_SLOT.get(ctx);
  const pending = state?.responsePhase;
  if (state === undefined || pending === undefined) return undefined;
  state.responsePhase = undefined;
  if (response.source !== 'upstream') {
    pending.close();
    return undefined;
  }
  return pending.run(response);
}

async function responsePhase(ctx: ProxyRequest, conv: Conversation, plan: RequestPlan, response: ChainResponse): Promise<ResponseResult> {
  const status = response.status;
  const headers = response.headers.list;
  let result: MessageResult;
  try {
    result = await conv.roundTrip(responseHeadersMessage(status, headers, ctx.method === 'HEAD' || status === 204 || status === 304));
  } finally {
    conv.close(); // nothing more is sent on this stream
  }
  if (result.kind !== 'response') {
    const failure = failureResult(result, plan.failureModeAllow);
    return failure.kind === 'reply' ? failure : undefined;
  }
  const msg = result.response;
  const answer = classify(ctx, conv, msg, 'response_headers');
  if (answer.kind === 'reply') return reply(answer.reply);
  if (answer.kind === 'spurious') {
    const r = spuriousResult(answer.details, plan.failureModeAllow);
    return r.kind === 'reply' ? r : undefined;
  }
  conv.receive(msg);
  const target = new ResponseHeadTarget(status, headers.slice());
  const mutation = applyMutation(target, answer.common.header_mutation, conv.settings.mutationRules);
  conv.noteMutation(mutation);
  if (mutation.error !== undefined) return errorReply(ERRORS.EXTPROC_PROTOCOL, mutation.error);
  const framing = contentLengthChange(headers, target.headers);
  if (framing !== undefined) return errorReply(ERRORS.EXTPROC_PROTOCOL, framing);
  response.replaceHead(target.status, target.headers);
  return undefined;
}

/**
 * The upstream's body is relayed as it comes, so the head must keep declaring its length: a content-length the
 * processor set or added that differs from the upstream's is an error (Envoy: a content-length mismatch → 500), as a
 * mutated request body's is (`applyBodyMutation`). Removing it is allowed (the body is then framed otherwise).
 */
function contentLengthChange(before: readonly string[], after: readonly string[]): string | undefined {
  const lengths = (l: readonly string[]): string[] => l.filter((_, i) => i % 2 === 1 && (l[i - 1] as string).toLowerCase() === 'content-length');
  const was = lengths(before);
  const now = lengths(after);
  if (now.length === 0 || now.join(',') === was.join(',')) return undefined;
  return `content-length ${JSON.stringify(now.join(', '))} does not match the upstream body (${was.length === 0 ? 'no content-length' : `content-length ${was.join(', ')}`})`;
}

/** An immediate response as a local reply (its header mutation errors → 500). */
function immediate(ctx: ProxyRequest, conv: Conversation, msg: ProcessingResponse): { kind: 'reply'; reply: LocalReply } {
  conv.receive(msg);
  const { reply: local, mutation } = immediateReply(msg.immediate_response ?? {}, conv.settings.mutationRules, isGrpcRequest(ctx.headers));
  conv.noteMutation(mutation);
  return { kind: 'reply', reply: mutation.error === undefined ? local : errorLocalReply(ERRORS.EXTPROC_PROTOCOL, mutation.error) };
}

/** Closes the stream this request kept open, if any (and forgets a response phase it was kept for). */
function closeStream(ctx: ProxyRequest): void {
  const state = EXT_PROC_SLOT.get(ctx);
  if (state === undefined) return;
  state.responsePhase = undefined;
  const stream = state.stream;
  if (stream === undefined) return;
  state.stream = undefined;
  stream.close();
}
