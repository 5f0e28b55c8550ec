/**
 * The two control-plane reads an egress CONNECT costs, GetActor and GetActorEgressPolicy, as one-shot calls with a
 * deadline, cancelled when the caller goes away. Each result is counted by RPC and gRPC code. No retry and no cache:
 * a CONNECT the control plane cannot answer is answered 503 and asked again by the next one.
 */
import * as grpc from '@grpc/grpc-js';
import type { ActorRef } from '../../lib/actor-ref.js';
import type { ControlActor, ControlClient } from '../../lib/resume/control-client.js';
import type { GetActorEgressPolicyResponse } from '../../lib/egress/policy-message.js';
import { grpcCodeName } from '../../lib/wire-contract.js';

export type EgressRpc = 'GetActor' | 'GetActorEgressPolicy';

export type ReadResult<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'error'; readonly code: grpc.status; readonly details: string };

export interface ReadObserver {
  call(rpc: EgressRpc, code: string): void;
}

const EMPTY_METADATA = new grpc.Metadata();

function read<Res>(
  start: (metadata: grpc.Metadata, options: Partial<grpc.CallOptions>, callback: (err: grpc.ServiceError | null, res?: Res) => void) => grpc.ClientUnaryCall,
  rpc: EgressRpc,
  deadline: number,
  signal: AbortSignal,
  observer: ReadObserver,
): Promise<ReadResult<Res>> {
  if (signal.aborted) return Promise.resolve({ kind: 'error', code: grpc.status.CANCELLED, details: 'the caller went away' });
  return new Promise((resolve) => {
    let call: grpc.ClientUnaryCall | undefined;
    const cancel = (): void => call?.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    call = start(EMPTY_METADATA, { deadline }, (err, res) => {
      signal.removeEventListener('abort', cancel);
      const result: ReadResult<Res> =
        err !== null ? { kind: 'error', code: err.code ?? grpc.status.UNKNOWN, details: err.details ?? '' } : { kind: 'ok', value: res as Res };
      observer.call(rpc, result.kind === 'ok' ? 'OK' : grpcCodeName(result.code));
      resolve(result);
    });
  });
}

export class ControlReads {
  constructor(
    private readonly client: ControlClient,
    private readonly observer: ReadObserver,
  ) {}

  getActor(ref: ActorRef, deadline: number, signal: AbortSignal): Promise<ReadResult<ControlActor | null>> {
    const request = { actor_ref: { atespace: ref.atespace, name: ref.name } };
    return read<{ readonly actor: ControlActor | null }>((md, opts, cb) => this.client.GetActor(request, md, opts, cb), 'GetActor', deadline, signal, this.observer).then((r) =>
      r.kind === 'ok' ? { kind: 'ok', value: r.value?.actor ?? null } : r,
    );
  }

  getEgressPolicy(ref: ActorRef, deadline: number, signal: AbortSignal): Promise<ReadResult<GetActorEgressPolicyResponse>> {
    const request = { actor_ref: { atespace: ref.atespace, name: ref.name } };
    return read<GetActorEgressPolicyResponse>((md, opts, cb) => this.client.GetActorEgressPolicy(request, md, opts, cb), 'GetActorEgressPolicy', deadline, signal, this.observer);
  }
}
