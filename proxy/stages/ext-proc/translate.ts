/**
 * Envoy's translation between a request and ext_proc messages: the request_headers message Envoy sends, the
 * response_headers message (`--extproc-response-headers send`), and how an answer's header mutations and
 * immediate responses apply (Envoy's default HeaderMutationRules: pseudo-headers, `host` and `x-envoy-*` cannot be
 * changed).
 */
import type { HeaderMap, LocalReply, RequestContext } from '../../api/filter.js';
import { headerValueOf, httpStatusOf, type HeaderMutation, type ProcessingRequest, type ProcessingResponse, type WireHeader } from './messages.js';

const PROTOCOL_CONFIG = Object.freeze({
  request_body_mode: 'NONE',
  response_body_mode: 'NONE',
  send_body_without_waiting_for_header_response: false,
});

function wire(key: string, value: string): WireHeader {
  return { key, raw_value: Buffer.from(value, 'latin1') };
}

/** What the request_headers message is made of. */
export type RequestHead = Pick<RequestContext, 'authority' | 'path' | 'method' | 'scheme'> & { readonly headers: Pick<HeaderMap, 'entries'> };

/** The request_headers message Envoy would send for `ctx`. */
export function requestHeadersMessage(ctx: RequestHead, endOfStream: boolean): ProcessingRequest {
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

/** The response_headers message for an upstream answer (observe only: the response has already started). */
export function responseHeadersMessage(status: number, headers: Readonly<Record<string, string | string[]>>): ProcessingRequest {
  const wireHeaders: WireHeader[] = [wire(':status', String(status))];
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const v of value) wireHeaders.push(wire(name, v));
    else wireHeaders.push(wire(name, value as string));
  }
  return { response_headers: { headers: { headers: wireHeaders }, end_of_stream: false } };
}
