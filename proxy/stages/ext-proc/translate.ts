/**
 * Envoy's translation between a request and ext_proc messages: the request_headers message Envoy sends (filtered
 * by `forward_rules`), the buffered request_body message, the response_headers message, and an immediate
 * response as a local reply (its headers under the filter's mutation rules, as Envoy >= 1.27; `grpc_status` only
 * for a gRPC request).
 */
import type { HeaderMap, LocalReply, RequestContext } from '../../api/filter.js';
import { httpStatusOf, type ImmediateResponse, type ProcessingRequest, type WireHeader } from './messages.js';
import { applyMutation, ResponseHeadTarget, type MutationResult } from './mutation.js';
import type { BodyMode, ExtProcSettings, MutationRules, NameMatcher } from './settings.js';

function wire(key: string, value: string): WireHeader {
  return { key, raw_value: Buffer.from(value, 'latin1') };
}

function matches(matchers: readonly NameMatcher[], name: string): boolean {
  for (const m of matchers) if (m.kind === 'exact' ? name === m.text : name.startsWith(m.text)) return true;
  return false;
}

/** Envoy's `forward_rules`: a header goes to the processor if allowed (or no allow-list) and not disallowed. */
function forwarded(rules: ExtProcSettings['forwardRules'], name: string): boolean {
  if (rules.allowed.length > 0 && !matches(rules.allowed, name)) return false;
  return rules.disallowed.length === 0 || !matches(rules.disallowed, name);
}

/** What the request_headers message is made of. */
export type RequestHead = Pick<RequestContext, 'authority' | 'path' | 'method' | 'scheme'> & { readonly headers: Pick<HeaderMap, 'entries'> };

/** The request_headers message Envoy would send for `ctx`. */
export function requestHeadersMessage(ctx: RequestHead, endOfStream: boolean, rules: ExtProcSettings['forwardRules']): ProcessingRequest {
  const all = rules.allowed.length === 0 && rules.disallowed.length === 0;
  const headers: WireHeader[] = [];
  const add = (name: string, value: string): void => {
    if (all || forwarded(rules, name)) headers.push(wire(name, value));
  };
  add(':authority', ctx.authority);
  add(':path', ctx.path);
  add(':method', ctx.method);
  add(':scheme', ctx.scheme);
  for (const [name, value] of ctx.headers.entries()) {
    if (name !== 'host') add(name, value);
  }
  return { request_headers: { headers: { headers }, end_of_stream: endOfStream } };
}

/** The `protocol_config` Envoy puts on a stream's first message. */
export function protocolConfig(requestBodyMode: BodyMode): NonNullable<ProcessingRequest['protocol_config']> {
  return { request_body_mode: requestBodyMode, response_body_mode: 'NONE', send_body_without_waiting_for_header_response: false };
}

/** The whole (buffered) request body. */
export function requestBodyMessage(body: Buffer): ProcessingRequest {
  return { request_body: { body, end_of_stream: true } };
}

/** The response_headers message for an upstream answer (`:status` first, then the headers as relayed). */
export function responseHeadersMessage(status: number, headers: readonly string[], endOfStream: boolean): ProcessingRequest {
  const wireHeaders: WireHeader[] = [wire(':status', String(status))];
  for (let i = 0; i < headers.length; i += 2) wireHeaders.push(wire((headers[i] as string).toLowerCase(), headers[i + 1] as string));
  return { response_headers: { headers: { headers: wireHeaders }, end_of_stream: endOfStream } };
}

/**
 * An ImmediateResponse as a local reply (status < 200 or absent → 200, as Envoy), or the mutation's error.
 * `grpc_status` becomes a `grpc-status` header only for a gRPC request.
 */
export function immediateReply(
  r: ImmediateResponse,
  rules: MutationRules,
  grpc: boolean,
): { readonly reply: LocalReply; readonly mutation: MutationResult } {
  let status = httpStatusOf(r.status?.code ?? undefined);
  if (status < 200) status = 200;
  const head = new ResponseHeadTarget(status, []);
  const mutation = applyMutation(head, r.headers, rules);
  const headers: Record<string, string> = {};
  for (let i = 0; i < head.headers.length; i += 2) {
    const name = head.headers[i] as string;
    const value = head.headers[i + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  if (grpc && r.grpc_status != null) headers['grpc-status'] = String(r.grpc_status.status ?? 0);
  const body = r.body !== undefined && r.body.length > 0 ? r.body : undefined;
  const details = `ext_proc immediate response${r.details ? `: ${r.details}` : ''}`;
  return { reply: { status: head.status, headers, ...(body !== undefined ? { body } : {}), details }, mutation };
}
