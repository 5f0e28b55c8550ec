/**
 * TypeScript shapes of proto/atestub/atestub.proto messages as @grpc/proto-loader presents them (lib/proto.ts
 * options: snake_case, int64/uint64 as strings, oneof name in a virtual property). Outgoing messages may use
 * numbers for 64-bit fields and omit the oneof property.
 */
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../lib/proto.js';
import { WORKERS_PROTO, WORKERS_SERVICE } from '../lib/wire-contract.js';

export type Int64 = string | number;

export interface Register {
  ip: string;
  port: number;
  capacity: number;
}
export interface Ack {
  op_id: Int64;
  error: string;
  seq: Int64;
}
export interface ActorServed {
  actor: string;
  request_ids: string[];
  count: Int64;
  last_seq: Int64;
}
export interface Served {
  actors: ActorServed[];
  requests: Int64;
  misdirected: Int64;
}

/** worker → control plane */
export type WorkerToControl =
  | { msg?: 'register'; register: Register }
  | { msg?: 'ack'; ack: Ack }
  | { msg?: 'served'; served: Served };

export interface ActivateOp {
  atespace: string;
  name: string;
  seq: Int64;
}
export interface DeactivateOp {
  atespace: string;
  name: string;
}

/** control plane → worker */
export type ControlOp =
  | { op?: 'registered'; registered: { worker: string } }
  | { op?: 'activate'; activate: ActivateOp }
  | { op?: 'deactivate'; deactivate: DeactivateOp }
  | { op?: 'flush'; flush: Record<string, never> }
  | { op?: 'set_listening'; set_listening: { listening: boolean } };
export type ControlToWorker = { op_id: Int64 } & ControlOp;


export function workersServiceDefinition(): grpc.ServiceDefinition {
  return workersClientConstructor().service;
}

export function workersClientConstructor(): grpc.ServiceClientConstructor {
  return lookup<grpc.ServiceClientConstructor>(loadProto(WORKERS_PROTO), WORKERS_SERVICE);
}

/** A typed Attach client. */
export interface WorkersClient extends grpc.Client {
  Attach(options?: grpc.CallOptions): grpc.ClientDuplexStream<WorkerToControl, ControlToWorker>;
}
