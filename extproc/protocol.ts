/**
 * The Envoy ext_proc v3 service as the server uses it: the ExternalProcessor definition loaded from proto/envoy/...
 * (lib/proto.ts options), with requests summarised from the wire and responses in proto-loader's object form
 * (snake_case fields, bytes as Buffers) or pre-encoded.
 */
import type * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../lib/proto.js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../lib/wire-contract.js';
import { summariseProcessingRequest, type RequestKind, type RequestSummary } from './wire.js';

export type { RequestKind };

/**
 * A ProcessingResponse: either the object form proto-loader serializes (bytes as Buffers, Struct values camelCase),
 * or the same message already encoded (responses that repeat are encoded once, see `encodeResponse`).
 */
export type ProcessingResponse = Readonly<Record<string, unknown>> | Buffer;

/** Requests arrive summarised straight from the wire (see wire.ts). */
export type ProcessCall = grpc.ServerDuplexStream<RequestSummary, ProcessingResponse>;

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

/**
 * The service definition the server adds: the loaded one, except that requests are read by `summariseProcessingRequest`
 * (only what the server uses) and pre-encoded responses are written as they are.
 */
export function externalProcessorServerDefinition(): grpc.ServiceDefinition {
  const loaded = externalProcessorService().service;
  const process = loaded.Process!;
  const serialize = process.responseSerialize;
  return {
    ...loaded,
    Process: {
      ...process,
      requestDeserialize: summariseProcessingRequest,
      responseSerialize: (value: ProcessingResponse) => (Buffer.isBuffer(value) ? value : serialize(value)),
    },
  };
}

/**
 * The field names of google.protobuf.Value in the loaded definition. protobufjs bundles them camelCase
 * (`stringValue`), and a future version may spell them snake_case; reading the definition avoids depending on either.
 */
export function structValueFields(): { readonly string: string; readonly number: string; readonly struct: string } {
  const value = lookup<{ type: { field: readonly { name: string }[] } }>(extProcRoot(), 'google.protobuf.Value');
  const names = new Set(value.type.field.map((f) => f.name));
  const pick = (camel: string, snake: string): string => (names.has(camel) ? camel : snake);
  return Object.freeze({ string: pick('stringValue', 'string_value'), number: pick('numberValue', 'number_value'), struct: pick('structValue', 'struct_value') });
}
