/**
 * TypeScript shapes of the ateapi messages as @grpc/proto-loader presents them with lib/proto.ts's options
 * (snake_case fields, enums as names, int64 as strings). Checked by hand against proto/ateapi/ateapi.proto.
 */

/** The egress policy messages, shared with extproc (which decodes them). */
export type { EgressPolicyMessage, EgressRuleMessage, GetActorEgressPolicyResponse } from '../lib/egress/policy-message.js';

export type ActorStatusName =
  | 'STATUS_UNSPECIFIED'
  | 'STATUS_RESUMING'
  | 'STATUS_RUNNING'
  | 'STATUS_SUSPENDING'
  | 'STATUS_SUSPENDED'
  | 'STATUS_PAUSING'
  | 'STATUS_PAUSED';

export interface ActorRefMessage {
  atespace: string;
  name: string;
}

export interface ActorMessage {
  actor_id: string;
  version: string;
  actor_template_namespace: string;
  actor_template_name: string;
  status: ActorStatusName;
  ateom_pod_namespace: string;
  ateom_pod_name: string;
  ateom_pod_ip: string;
  in_progress_snapshot: string;
  ateom_pod_uid: string;
  atespace: string;
}

export interface WorkerMessage {
  worker_namespace: string;
  worker_pool: string;
  worker_pod: string;
  actor_namespace: string;
  actor_template: string;
  actor_id: string;
  ip: string;
  version: string;
  worker_pod_uid: string;
  node_name: string;
  actor_atespace: string;
}

/** Requests arrive with defaults filled, but a missing message field is null. */
export interface ActorRefRequest {
  actor_ref: ActorRefMessage | null;
}
export type GetActorRequest = ActorRefRequest;
export type GetActorEgressPolicyRequest = ActorRefRequest;
export type SuspendActorRequest = ActorRefRequest;
export type DeleteActorRequest = ActorRefRequest;
export interface ResumeActorRequest extends ActorRefRequest {
  boot: boolean;
}
export interface CreateActorRequest extends ActorRefRequest {
  actor_template_namespace: string;
  actor_template_name: string;
}
export interface ListActorsRequest {
  page_size: number;
  page_token: string;
  atespace: string;
}

export interface ActorResponse {
  actor: ActorMessage;
}
export interface ListActorsResponse {
  actors: ActorMessage[];
  next_page_token: string;
}
export interface ListWorkersResponse {
  workers: WorkerMessage[];
}
