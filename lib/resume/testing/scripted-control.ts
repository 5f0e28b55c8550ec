/**
 * Test double for ateapi.Control: a real gRPC server on 127.0.0.1 (port 0) whose ResumeActor answers come from a
 * script the test sets. It records every call and whether the caller cancelled it. Only for tests: the real
 * control-plane simulation is apiserver-stub.
 */
import * as grpc from '@grpc/grpc-js';
import { controlService, RUNNING_STATUS, type ControlActor, type ResumeActorRequest } from '../control-client.js';

export type ScriptAnswer =
  | { readonly kind: 'ok'; readonly ip: string; readonly status?: string; readonly resumed?: boolean }
  | { readonly kind: 'error'; readonly code: grpc.status; readonly details?: string };

/** Gets the request and the 0-based index of this call (across the server's life, or since `reset()`). */
export type Script = (request: ResumeActorRequest, index: number) => ScriptAnswer | Promise<ScriptAnswer>;

export interface RecordedCall {
  readonly request: ResumeActorRequest;
  /** Set when the client cancelled the call (or its deadline passed) before it was answered. */
  cancelled: boolean;
  answered: boolean;
}

export interface ScriptedControl {
  readonly address: string;
  readonly calls: RecordedCall[];
  script: Script;
  /** Forgets recorded calls (the next call has index 0). */
  reset(script?: Script): void;
  close(): Promise<void>;
}

export function runningActor(request: ResumeActorRequest, ip: string, status = RUNNING_STATUS): ControlActor {
  return {
    actor_id: `${request.actor_ref.atespace}/${request.actor_ref.name}`,
    version: '1',
    status,
    ateom_pod_ip: ip,
    atespace: request.actor_ref.atespace,
  };
}

export async function startScriptedControl(script: Script = () => ({ kind: 'ok', ip: '127.0.0.1' })): Promise<ScriptedControl> {
  const server = new grpc.Server();
  const calls: RecordedCall[] = [];
  const state: ScriptedControl = {
    address: '',
    calls,
    script,
    reset(next?: Script) {
      calls.length = 0;
      if (next) state.script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
  const unimplemented = (_call: unknown, cb: grpc.sendUnaryData<unknown>): void => cb({ code: grpc.status.UNIMPLEMENTED, details: 'scripted' });
  server.addService(controlService().service, {
    GetActor: unimplemented,
    CreateActor: unimplemented,
    SuspendActor: unimplemented,
    DeleteActor: unimplemented,
    ListWorkers: unimplemented,
    ListActors: unimplemented,
    ResumeActor: (call: grpc.ServerUnaryCall<ResumeActorRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const record: RecordedCall = { request: call.request, cancelled: false, answered: false };
      const index = calls.push(record) - 1;
      call.on('cancelled', () => {
        if (!record.answered) record.cancelled = true;
      });
      void Promise.resolve(state.script(call.request, index)).then((answer) => {
        record.answered = true;
        if (answer.kind === 'ok') {
          const response: Record<string, unknown> = { actor: runningActor(call.request, answer.ip, answer.status) };
          if (answer.resumed !== undefined) response.resumed = answer.resumed;
          cb(null, response);
        } else {
          cb({ code: answer.code, details: answer.details ?? '' });
        }
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  (state as { address: string }).address = `127.0.0.1:${port}`;
  return state;
}
