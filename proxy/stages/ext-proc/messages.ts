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

export interface BodyMutation {
  readonly mutation?: string;
  readonly body?: Buffer | Uint8Array;
  readonly clear_body?: boolean;
  readonly streamed_response?: unknown;
}

export interface CommonResponse {
  readonly status?: string;
  readonly header_mutation?: HeaderMutation | null;
  readonly body_mutation?: BodyMutation | null;
}

/** `envoy.extensions.filters.http.ext_proc.v3.ProcessingMode` (enum values as names). */
export interface ProcessingModeMessage {
  readonly request_header_mode?: string;
  readonly response_header_mode?: string;
  readonly request_body_mode?: string;
  readonly response_body_mode?: string;
  readonly request_trailer_mode?: string;
  readonly response_trailer_mode?: string;
}

/** `google.protobuf.Duration` (int64 seconds as a string, as lib/proto.ts loads it). */
export interface DurationMessage {
  readonly seconds?: string | number;
  readonly nanos?: number;
}

export interface ImmediateResponse {
  readonly status?: { readonly code?: string | number } | null;
  readonly headers?: HeaderMutation | null;
  readonly body?: Buffer | Uint8Array;
  readonly grpc_status?: { readonly status?: number } | null;
  readonly details?: string;
}

/** `HeaderMap`: header values in `raw_value` (or, from an older processor, `value`). */
export interface HeaderMapMessage {
  readonly headers?: readonly HeaderValue[];
}

/** A streamed local reply's pieces, in order: the head, then body chunks, then trailers (or an end of stream). */
export interface StreamedImmediateResponse {
  /** Which piece (proto-loader's oneof name), when decoded. */
  readonly response?: string;
  readonly headers_response?: { readonly headers?: HeaderMapMessage | null; readonly end_of_stream?: boolean } | null;
  readonly body_response?: { readonly body?: Buffer | Uint8Array; readonly end_of_stream?: boolean } | null;
  readonly trailers_response?: HeaderMapMessage | null;
}

export interface StructValue {
  readonly kind?: string;
  readonly stringValue?: string;
  readonly numberValue?: number;
  readonly boolValue?: boolean;
  readonly structValue?: StructMessage | null;
}

export interface StructMessage {
  readonly fields?: Readonly<Record<string, StructValue>>;
}

export interface ProcessingResponse {
  readonly response?: string;
  readonly request_headers?: { readonly response?: CommonResponse | null } | null;
  readonly response_headers?: { readonly response?: CommonResponse | null } | null;
  readonly request_body?: { readonly response?: CommonResponse | null } | null;
  readonly immediate_response?: ImmediateResponse | null;
  readonly streamed_immediate_response?: StreamedImmediateResponse | null;
  readonly dynamic_metadata?: StructMessage | null;
  readonly mode_override?: ProcessingModeMessage | null;
  readonly override_message_timeout?: DurationMessage | null;
}

export interface WireHeader {
  readonly key: string;
  readonly raw_value: Buffer;
}

interface HttpHeadersMessage {
  readonly headers: { readonly headers: readonly WireHeader[] };
  readonly end_of_stream: boolean;
}

export interface ProcessingRequest {
  readonly request_headers?: HttpHeadersMessage;
  readonly response_headers?: HttpHeadersMessage;
  readonly request_body?: { readonly body: Buffer; readonly end_of_stream: boolean };
  /** `envoy.config.core.v3.Metadata`: the forwarded namespaces. */
  readonly metadata_context?: { readonly filter_metadata: Readonly<Record<string, StructMessage>> };
  /** Keyed by the filter name `envoy.filters.http.ext_proc`; only on the first message, only when configured. */
  readonly attributes?: Readonly<Record<string, StructMessage>>;
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

/**
 * A header value as Envoy (>= 1.32) reads it: only `raw_value`; a value given only in `value` reads as empty
 * (`valueOnly` tells the caller, which logs it), and both non-empty is an error (`both`).
 */
export function headerValueOf(h: HeaderValue): { value: string; both: boolean; valueOnly: boolean } {
  const raw = h.raw_value;
  const hasRaw = raw !== undefined && raw.length > 0;
  const hasValue = h.value !== undefined && h.value !== '';
  const value = hasRaw ? Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1') : '';
  return { value, both: hasRaw && hasValue, valueOnly: hasValue && !hasRaw };
}

/** A Duration in milliseconds (fractions kept). */
export function durationMs(d: DurationMessage): number {
  return Number(d.seconds ?? 0) * 1000 + (d.nanos ?? 0) / 1e6;
}

/** A Struct of string values. */
export function structOf(fields: Readonly<Record<string, string>>): StructMessage {
  const out: Record<string, StructValue> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = { kind: 'stringValue', stringValue: v };
  return { fields: out };
}
