/**
 * The Envoy ext_proc v3 wire types as this project decodes them (lib/proto.ts options: snake_case fields, enums as
 * names, oneof name in `request`/`response`), and the ExternalProcessor service definition. Only the fields the
 * server reads are typed; everything else decodes too and is ignored.
 */
import type * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../lib/proto.js';

export const EXT_PROC_PROTO = 'envoy/service/ext_proc/v3/external_processor.proto';
export const EXT_PROC_SERVICE = 'envoy.service.ext_proc.v3.ExternalProcessor';

export interface HeaderValue {
  readonly key: string;
  readonly value: string;
  readonly raw_value: Buffer | Uint8Array;
}

export interface HttpHeaders {
  readonly headers: { readonly headers: readonly HeaderValue[] } | null;
  readonly end_of_stream: boolean;
}

export type RequestKind =
  | 'request_headers'
  | 'response_headers'
  | 'request_body'
  | 'response_body'
  | 'request_trailers'
  | 'response_trailers';

export interface ProcessingRequest {
  /** Which oneof member is set (undefined if none: a malformed message). */
  readonly request?: RequestKind;
  readonly request_headers?: HttpHeaders;
  readonly response_headers?: HttpHeaders;
  readonly observability_mode: boolean;
  readonly protocol_config: {
    readonly request_body_mode: string;
    readonly response_body_mode: string;
    readonly send_body_without_waiting_for_header_response: boolean;
  } | null;
  readonly [field: string]: unknown;
}

/**
 * A ProcessingResponse: either the object form proto-loader serializes (bytes as Buffers, Struct values camelCase),
 * or the same message already encoded (responses that repeat are encoded once, see `encodeResponse`).
 */
export type ProcessingResponse = Readonly<Record<string, unknown>> | Buffer;

export type ProcessCall = grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>;

export function extProcRoot(): grpc.GrpcObject {
  return loadProto(EXT_PROC_PROTO);
}

/** The ExternalProcessor service constructor (`.service` is the definition a server adds). */
export function externalProcessorService(): grpc.ServiceClientConstructor {
  return lookup<grpc.ServiceClientConstructor>(extProcRoot(), EXT_PROC_SERVICE);
}

/** Encodes a response once, for answers that repeat (the server's serializer passes Buffers through). */
export function encodeResponse(response: Readonly<Record<string, unknown>>): Buffer {
  return externalProcessorService().service.Process!.responseSerialize(response);
}

/** The service definition the server adds: as loaded, except that pre-encoded responses are written as they are. */
export function externalProcessorServerDefinition(): grpc.ServiceDefinition {
  const loaded = externalProcessorService().service;
  const process = loaded.Process!;
  const serialize = process.responseSerialize;
  return {
    ...loaded,
    Process: { ...process, responseSerialize: (value: ProcessingResponse) => (Buffer.isBuffer(value) ? value : serialize(value)) },
  };
}

/**
 * The field names of google.protobuf.Value in the loaded definition. protobufjs bundles them camelCase
 * (`stringValue`), and a future version may spell them snake_case; reading the definition avoids depending on either.
 */
export function structValueFields(): { readonly string: string; readonly struct: string } {
  const value = lookup<{ type: { field: readonly { name: string }[] } }>(extProcRoot(), 'google.protobuf.Value');
  const names = new Set(value.type.field.map((f) => f.name));
  const pick = (camel: string, snake: string): string => (names.has(camel) ? camel : snake);
  return Object.freeze({ string: pick('stringValue', 'string_value'), struct: pick('structValue', 'struct_value') });
}
