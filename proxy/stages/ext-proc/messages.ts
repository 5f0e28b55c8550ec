/**
 * The subset of Envoy's ext_proc v3 messages the proxy reads and writes, as proto-loader delivers them
 * (keepCase field names, enums as names, bytes as Buffers, `google.protobuf.Struct` values camelCase), and the
 * numeric HTTP status behind `envoy.type.v3.StatusCode` names.
 */
import { loadProto, lookup } from '../../../lib/proto.js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../../../lib/wire-contract.js';

export interface HeaderValue {
  readonly key: string;
  readonly value?: string;
  readonly raw_value?: Buffer | Uint8Array;
}

export interface HeaderValueOption {
  readonly header?: HeaderValue | null;
  readonly append?: { readonly value?: boolean } | null;
}

export interface HeaderMutation {
  readonly set_headers?: readonly HeaderValueOption[];
  readonly remove_headers?: readonly string[];
}

export interface CommonResponse {
  readonly status?: string;
  readonly header_mutation?: HeaderMutation | null;
}

export interface ImmediateResponse {
  readonly status?: { readonly code?: string | number } | null;
  readonly headers?: HeaderMutation | null;
  readonly body?: Buffer | Uint8Array;
  readonly grpc_status?: { readonly status?: number } | null;
  readonly details?: string;
}

export interface StructValue {
  readonly kind?: string;
  readonly stringValue?: string;
  readonly structValue?: { readonly fields?: Readonly<Record<string, StructValue>> } | null;
}

export interface ProcessingResponse {
  readonly response?: string;
  readonly request_headers?: { readonly response?: CommonResponse | null } | null;
  readonly response_headers?: { readonly response?: CommonResponse | null } | null;
  readonly immediate_response?: ImmediateResponse | null;
  readonly dynamic_metadata?: { readonly fields?: Readonly<Record<string, StructValue>> } | null;
}

export interface WireHeader {
  readonly key: string;
  readonly raw_value: Buffer;
}

export interface ProcessingRequest {
  readonly request_headers?: { readonly headers: { readonly headers: readonly WireHeader[] }; readonly end_of_stream: boolean };
  readonly response_headers?: { readonly headers: { readonly headers: readonly WireHeader[] }; readonly end_of_stream: boolean };
  readonly protocol_config?: {
    readonly request_body_mode: string;
    readonly response_body_mode: string;
    readonly send_body_without_waiting_for_header_response: boolean;
  };
}

export { EXT_PROC_PROTO, EXT_PROC_SERVICE };

let statusByName: ReadonlyMap<string, number> | undefined;

/** `envoy.type.v3.StatusCode` name or number → HTTP status (0 when unknown or `Empty`). */
export function httpStatusOf(code: string | number | undefined): number {
  if (typeof code === 'number') return code;
  if (code === undefined) return 0;
  if (statusByName === undefined) {
    const e = lookup<{ type: { value: { name: string; number: number }[] } }>(loadProto(EXT_PROC_PROTO), 'envoy.type.v3.StatusCode');
    statusByName = new Map(e.type.value.map((v) => [v.name, v.number]));
  }
  return statusByName.get(code) ?? (/^\d+$/.test(code) ? Number(code) : 0);
}

/** A header value as Envoy reads it: `raw_value` when set, else `value`. */
export function headerValueOf(h: HeaderValue): { value: string; both: boolean } {
  const raw = h.raw_value;
  const rawText = raw !== undefined && raw.length > 0 ? Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1') : undefined;
  const plain = h.value ?? '';
  return { value: rawText ?? plain, both: rawText !== undefined && plain !== '' };
}

/** The string at `fields[namespace].fields[key]` of a dynamic-metadata Struct, if it is a string. */
export function metadataString(
  metadata: ProcessingResponse['dynamic_metadata'],
  namespace: string,
  key: string,
): string | undefined {
  const ns = metadata?.fields?.[namespace]?.structValue?.fields?.[key];
  return typeof ns?.stringValue === 'string' && (ns.kind === undefined || ns.kind === 'stringValue') ? ns.stringValue : undefined;
}
