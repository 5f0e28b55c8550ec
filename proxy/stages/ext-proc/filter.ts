/**
 * ext-proc: the slow path. For a request that no earlier filter routed (a cache miss, or no cache), it opens one
 * `Process` stream and sends the request headers as Envoy does (lower-case names plus `:authority`, `:path`,
 * `:method`, `:scheme`; values in `raw_value`; `protocol_config` in the first message), then applies the answer:
 * - `immediate_response` → a local reply with its status (default 200), headers and body;
 * - header mutations → set (`append` true adds, otherwise overwrites), remove; values from `raw_value`, falling
 *   back to `value`. Pseudo-headers, `host` and `x-envoy-*` cannot be changed (Envoy's default mutation rules);
 * - dynamic metadata `envoy.filters.listener.original_dst` / `local` → the route (a literal `ip:port`; anything
 *   else → 503 "no healthy upstream").
 * Failures as Envoy with `failure_mode_allow: false`: message timeout → 504, stream error → 500; with
 * `--failure-mode-allow` the request continues unprocessed (and, having no route, gets 503).
 * With `--extproc-response-headers send` the upstream response headers are sent on the same stream (observe
 * only: the response has already started). Every stream is closed by the time the request is done.
 */
import { performance } from 'node:perf_hooks';
import { CONTINUE, reply, type Filter, type FilterResult, type LocalReply, type RequestContext, type UpstreamOutcome } from '../../api/filter.js';
import { ERRORS, type ProxyErrorSpec } from '../../chain/errors.js';
import { isLiteralAddress } from '../../upstream/route-address.js';
import { ProxyRequest } from '../../request/context.js';
import type { ExtProcClient, ExtProcStream, ExchangeResult } from './grpc-client.js';
import {
  headerValueOf,
  httpStatusOf,
  metadataString,
  type HeaderMutation,
  type ProcessingRequest,
  type ProcessingResponse,
  type WireHeader,
} from './messages.js';
import { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE } from '../../../lib/wire-contract.js';

export const EXT_PROC_FILTER_NAME = 'ext-proc';

export interface ExtProcFilterOptions {
  readonly client: Pick<ExtProcClient, 'open'>;
  readonly failureModeAllow: boolean;
  readonly sendResponseHeaders: boolean;
}

const STREAM = Symbol('ext-proc.stream');

const PROTOCOL_CONFIG = Object.freeze({
  request_body_mode: 'NONE',
  response_body_mode: 'NONE',
  send_body_without_waiting_for_header_response: false,
});

function errorReply(spec: ProxyErrorSpec, details: string): FilterResult {
  return reply({ status: spec.status, body: `${spec.text}\n`, details: `${spec.code}: ${details}` });
}

function wire(key: string, value: string): WireHeader {
  return { key, raw_value: Buffer.from(value, 'latin1') };
}

/** The request_headers message Envoy would send for `ctx`. */
export function requestHeadersMessage(ctx: RequestContext, endOfStream: boolean): ProcessingRequest {
  const headers: WireHeader[] = [
    wire(':authority', ctx.authority),
    wire(':path', ctx.path),
    wire(':method', ctx.method),
    wire(':scheme', ctx.scheme),
  ];
  for (const [name, value] of ctx.headers.entries()) {
    if (name !== 'host') headers.push(wire(name, value));
  }
  return { request_headers: { headers: { headers }, end_of_stream: endOfStream }, protocol_config: PROTOCOL_CONFIG };
}

/** Header names a processor may not change (Envoy's default HeaderMutationRules). */
function mutationAllowed(name: string): boolean {
  return name !== '' && !name.startsWith(':') && name !== 'host' && !name.startsWith('x-envoy-');
}

/** Applies a request header mutation; returns an error text for an invalid one (Envoy answers 500). */
export function applyHeaderMutation(ctx: RequestContext, m: HeaderMutation | null | undefined): string | undefined {
  if (m == null) return undefined;
  for (const opt of m.set_headers ?? []) {
    const h = opt.header;
    if (h == null) continue;
    const name = h.key.toLowerCase();
    const { value, both } = headerValueOf(h);
    if (both) return `header "${name}" has both value and raw_value`;
    if (!mutationAllowed(name)) continue;
    try {
      if (opt.append?.value === true) ctx.headers.append(name, value);
      else ctx.headers.set(name, value);
    } catch {
      return `invalid header "${name}"`;
    }
  }
  for (const raw of m.remove_headers ?? []) {
    const name = raw.toLowerCase();
    if (mutationAllowed(name)) ctx.headers.delete(name);
  }
  return undefined;
}

/** An ImmediateResponse as a local reply (status < 200 or absent → 200, as Envoy). */
export function immediateReply(r: NonNullable<ProcessingResponse['immediate_response']>): LocalReply {
  let status = httpStatusOf(r.status?.code ?? undefined);
  if (status < 200) status = 200;
  const headers: Record<string, string> = {};
  for (const opt of r.headers?.set_headers ?? []) {
    const h = opt.header;
    if (h == null) continue;
    const name = h.key.toLowerCase();
    if (!mutationAllowed(name)) continue;
    const { value } = headerValueOf(h);
    headers[name] = opt.append?.value === true && headers[name] !== undefined ? `${headers[name]}, ${value}` : value;
  }
  if (r.grpc_status != null) headers['grpc-status'] = String(r.grpc_status.status ?? 0);
  const body = r.body !== undefined && r.body.length > 0 ? r.body : undefined;
  return { status, headers, ...(body !== undefined ? { body } : {}), details: `ext_proc immediate response${r.details ? `: ${r.details}` : ''}` };
}

function hasBody(ctx: RequestContext): boolean {
  return ctx instanceof ProxyRequest ? ctx.body !== null : ctx.headers.has('content-length') && ctx.headers.get('content-length') !== '0';
}

function addLatency(ctx: RequestContext, startedAt: number): void {
  if (ctx instanceof ProxyRequest) ctx.extprocMs = (ctx.extprocMs ?? 0) + (performance.now() - startedAt);
}

export function createExtProcFilter(opts: ExtProcFilterOptions): Filter {
  const { client, failureModeAllow, sendResponseHeaders } = opts;

  function closeStream(ctx: RequestContext): void {
    const stream = ctx.locals.get(STREAM) as ExtProcStream | undefined;
    if (stream === undefined) return;
    ctx.locals.delete(STREAM);
    stream.close();
  }

  function failure(result: Exclude<ExchangeResult, { kind: 'response' }>): FilterResult {
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

  async function process(ctx: RequestContext): Promise<FilterResult> {
    closeStream(ctx); // a stream left from an earlier attempt
    const stream = client.open();
    if (sendResponseHeaders) ctx.locals.set(STREAM, stream);
    const startedAt = performance.now();
    let result: ExchangeResult;
    try {
      result = await stream.exchange(requestHeadersMessage(ctx, !hasBody(ctx)), ctx.signal);
    } finally {
      addLatency(ctx, startedAt);
      if (!sendResponseHeaders) stream.close();
    }
    if (result.kind !== 'response') {
      closeStream(ctx);
      return failure(result);
    }
    const msg = result.response;
    if (msg.immediate_response != null) {
      closeStream(ctx);
      return reply(immediateReply(msg.immediate_response));
    }
    if (msg.request_headers == null) {
      closeStream(ctx);
      return errorReply(ERRORS.EXTPROC_PROTOCOL, `expected a request_headers response, got ${msg.response ?? 'nothing'}`);
    }
    const invalid = applyHeaderMutation(ctx, msg.request_headers.response?.header_mutation);
    if (invalid !== undefined) {
      closeStream(ctx);
      return errorReply(ERRORS.EXTPROC_PROTOCOL, invalid);
    }
    const local = metadataString(msg.dynamic_metadata, ORIGINAL_DST_NAMESPACE, ORIGINAL_DST_LOCAL_KEY);
    if (local !== undefined) {
      if (!isLiteralAddress(local)) {
        closeStream(ctx);
        return errorReply(ERRORS.BAD_ROUTE, `original_dst "${local}" is not a literal ip:port`);
      }
      ctx.route = { address: local, source: 'extproc' };
    }
    return CONTINUE;
  }

  const filter: Filter = {
    name: EXT_PROC_FILTER_NAME,
    onRequest(ctx: RequestContext): FilterResult | Promise<FilterResult> {
      if (ctx.route !== undefined) return CONTINUE; // already routed (a cache hit): no stream at all
      return process(ctx);
    },
  };
  if (!sendResponseHeaders) return filter; // every stream is closed inside onRequest

  return {
    ...filter,

    onUpstreamResponse(ctx: RequestContext, outcome: UpstreamOutcome): void {
      const stream = ctx.locals.get(STREAM) as ExtProcStream | undefined;
      if (stream === undefined) return;
      if (outcome.kind !== 'response') {
        closeStream(ctx);
        return;
      }
      ctx.locals.delete(STREAM);
      const headers: WireHeader[] = [wire(':status', String(outcome.status))];
      for (const [name, value] of Object.entries(outcome.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.push(wire(name, v));
        else headers.push(wire(name, value as string));
      }
      // Observe only: wait for the processor's answer to keep the conversation in order, then close.
      void stream.exchange({ response_headers: { headers: { headers }, end_of_stream: false } }).then(() => stream.close());
    },

    onRerun(ctx: RequestContext): void {
      closeStream(ctx);
    },

    onDone(ctx: RequestContext): void {
      closeStream(ctx);
    },
  };
}
