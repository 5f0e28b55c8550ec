/** Store records → ateapi messages (and the admin API's JSON views of the same records). */
import type { ActorMessage, ActorStatusName, WorkerMessage } from './ateapi-types.js';
import type { ActorRef } from '../lib/actor-ref.js';
import type { EgressRule } from '../lib/egress/policy.js';
import { workerAlive, type ActorRecord, type ActorStatus, type Store, type StoredEgressPolicy, type WorkerRecord } from './store.js';

const WORKER_NAMESPACE = 'ate-system';
const WORKER_POOL = 'stub';
const NODE_NAME = 'apiserver-stub';

function statusName(status: ActorStatus): ActorStatusName {
  return `STATUS_${status}`;
}

export function actorMessage(store: Store, actor: ActorRecord): ActorMessage {
  const worker = actor.workerIp === null ? undefined : store.workers.get(actor.workerIp);
  return {
    actor_id: actor.actorId,
    version: String(actor.version),
    actor_template_namespace: actor.templateNamespace,
    actor_template_name: actor.templateName,
    status: statusName(actor.status),
    ateom_pod_namespace: worker ? WORKER_NAMESPACE : '',
    ateom_pod_name: worker?.pod ?? '',
    ateom_pod_ip: actor.workerIp ?? '',
    in_progress_snapshot: '',
    ateom_pod_uid: worker?.uid ?? '',
    atespace: actor.ref.atespace,
  };
}

export function workerMessage(store: Store, worker: WorkerRecord): WorkerMessage {
  const first = worker.actors.values().next();
  const actor = first.done ? undefined : store.actors.get(first.value);
  return {
    worker_namespace: WORKER_NAMESPACE,
    worker_pool: WORKER_POOL,
    worker_pod: worker.pod,
    actor_namespace: actor?.templateNamespace ?? '',
    actor_template: actor?.templateName ?? '',
    actor_id: actor?.actorId ?? '',
    ip: worker.ip,
    version: String(worker.version),
    worker_pod_uid: worker.uid,
    node_name: NODE_NAME,
    actor_atespace: actor?.ref.atespace ?? '',
  };
}

export interface ActorView {
  readonly atespace: string;
  readonly name: string;
  readonly status: ActorStatus;
  readonly workerIp: string | null;
  readonly version: number;
  readonly seq: number;
  readonly busy: string | null;
}

export function actorView(actor: ActorRecord): ActorView {
  return {
    atespace: actor.ref.atespace,
    name: actor.ref.name,
    status: actor.status,
    workerIp: actor.workerIp,
    version: actor.version,
    seq: actor.seq,
    busy: actor.lease?.op ?? null,
  };
}

export function workerView(worker: WorkerRecord) {
  return {
    ip: worker.ip,
    port: worker.port,
    capacity: worker.capacity,
    alive: workerAlive(worker),
    attached: worker.attached,
    listening: worker.listening,
    requests: worker.requests,
    misdirected: worker.misdirected,
    actors: [...worker.actors].sort(),
  };
}

export interface EgressPolicyView {
  readonly atespace: string;
  readonly name: string;
  readonly generation: number;
  readonly rules: readonly EgressRule[];
}

/** An actor's egress policy as the admin API shows it (the JSON it is set with, plus its generation). */
export function egressPolicyView(ref: ActorRef, stored: StoredEgressPolicy): EgressPolicyView {
  return { atespace: ref.atespace, name: ref.name, generation: stored.generation, rules: stored.policy.rules };
}
