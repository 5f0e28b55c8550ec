/**
 * The typed ateapi.Control client shared by extproc and the proxy's `--resolver apiserver`. One client owns one
 * grpc-js channel (HTTP/2 connection) to the control plane; create it once per process and reuse it.
 */
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../proto.js';
import type { ActorRef } from '../actor-ref.js';
import { CONTROL_PROTO, CONTROL_SERVICE } from '../wire-contract.js';
import type { GetActorEgressPolicyResponse } from '../egress/policy-message.js';

/** An actor as the control plane reports it (only the fields the resolvers read are typed strictly). */
export interface ControlActor {
  readonly actor_id: string;
  readonly version: string;
  readonly status: string;
  /** The worker's IP; empty when the actor has no worker. */
  readonly ateom_pod_ip: string;
  readonly atespace: string;
  readonly [field: string]: unknown;
}

export interface ResumeActorRequest {
  readonly actor_ref: { readonly atespace: string; readonly name: string };
  readonly boot?: boolean;
}

export interface ResumeActorResponse {
  readonly actor: ControlActor | null;
  /** Present only if the control plane's API has it: false when the actor was already RUNNING. */
  readonly resumed?: boolean;
}

type Unary<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (err: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

export interface ControlClient extends grpc.Client {
  ResumeActor: Unary<ResumeActorRequest, ResumeActorResponse>;
  GetActor: Unary<{ readonly actor_ref: ResumeActorRequest['actor_ref'] }, { readonly actor: ControlActor | null }>;
  GetActorEgressPolicy: Unary<{ readonly actor_ref: ResumeActorRequest['actor_ref'] }, GetActorEgressPolicyResponse>;
}

export const RUNNING_STATUS = 'STATUS_RUNNING';

/** The ateapi.Control service constructor and definition (for clients, and for servers such as test doubles). */
export function controlService(): grpc.ServiceClientConstructor {
  return lookup<grpc.ServiceClientConstructor>(loadProto(CONTROL_PROTO), CONTROL_SERVICE);
}

/**
 * Channel options for a nearby control plane: reconnect quickly after it comes back (grpc-js would otherwise back
 * off for up to two minutes and fail every call as UNAVAILABLE meanwhile) and keep the connection alive. grpc-js's
 * transparent retries are off (the flights own every retry decision) and so is channelz: both cost CPU per call.
 */
export const CONTROL_CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({
  'grpc.enable_retries': 0,
  'grpc.enable_channelz': 0,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
});

/**
 * `address` is `host:port` (IPv6 in brackets). `credentials`: TLS (`lib/tls/grpc-client-credentials.ts`); absent:
 * plain-text HTTP/2.
 */
export function createControlClient(address: string, options: grpc.ChannelOptions = {}, credentials?: grpc.ChannelCredentials): ControlClient {
  const Ctor = controlService();
  return new Ctor(address, credentials ?? grpc.credentials.createInsecure(), { ...CONTROL_CHANNEL_OPTIONS, ...options }) as unknown as ControlClient;
}

/** The result of one ResumeActor call. */
export type AttemptResult =
  | { readonly kind: 'ok'; readonly actor: ControlActor; readonly resumed: boolean | undefined }
  | { readonly kind: 'error'; readonly code: grpc.status; readonly details: string };

const EMPTY_METADATA = new grpc.Metadata();

/**
 * Calls ResumeActor once. `timeoutMs` is a backstop deadline only: callers must not use it to cancel a resume
 * that is under way (cancelling mid-restore can strand a worker). `metadata`: e.g. the call's trace context.
 */
export function resumeActorOnce(client: ControlClient, ref: ActorRef, timeoutMs: number, metadata: grpc.Metadata = EMPTY_METADATA): Promise<AttemptResult> {
  return new Promise((resolve) => {
    client.ResumeActor(
      { actor_ref: { atespace: ref.atespace, name: ref.name } },
      metadata,
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        if (err) {
          resolve({ kind: 'error', code: err.code ?? grpc.status.UNKNOWN, details: err.details ?? '' });
        } else if (!response?.actor) {
          resolve({ kind: 'error', code: grpc.status.INTERNAL, details: 'ResumeActor returned no actor' });
        } else {
          resolve({ kind: 'ok', actor: response.actor, resumed: typeof response.resumed === 'boolean' ? response.resumed : undefined });
        }
      },
    );
  });
}
