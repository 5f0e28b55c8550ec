/**
 * Control-plane side of atestub.Workers/Attach. The first message registers the worker; from then on the stream
 * is the worker's link: operations go out with a fresh op id and complete when the worker's Ack with that id
 * comes back; Served batches feed the delivery records. When the stream ends, errors, or an operation goes
 * unanswered past its deadline, the worker is dead and the control plane suspends its actors.
 */
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { ActorRef } from '../lib/actor-ref.js';
import type { Logger } from '../lib/logger.js';
import type { Ack, ControlOp, ControlToWorker, Register, WorkerToControl } from './atestub-types.js';
import type { ControlPlane } from './control-plane.js';
import { asStubError, errors } from './errors.js';
import type { RpcCounters } from './rpc-counters.js';
import type { WorkerLink, WorkerRecord } from './store.js';

/** An operation the worker does not acknowledge within this time marks it dead. */
export const OPERATION_TIMEOUT_MS = 10_000;

type AttachCall = grpc.ServerDuplexStream<WorkerToControl, ControlToWorker>;

interface Pending {
  resolve(ack: Ack): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** WorkerLink over one Attach stream. */
class StreamLink implements WorkerLink {
  private nextOpId = 1;
  private readonly pending = new Map<number, Pending>();
  private deadReason: string | null = null;

  constructor(
    private readonly call: AttachCall,
    readonly ip: string,
    private readonly kill: (why: string, code: grpc.status) => void,
  ) {}

  private send(op: ControlOp): Promise<Ack> {
    if (this.deadReason !== null) return Promise.reject(errors.workerLost(this.ip, this.deadReason));
    if (!this.call.writable) return Promise.reject(errors.workerLost(this.ip, 'stream closed'));
    const opId = this.nextOpId++;
    return new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(
        () => this.kill(`operation ${opId} not acknowledged within ${OPERATION_TIMEOUT_MS} ms`, grpc.status.DEADLINE_EXCEEDED),
        OPERATION_TIMEOUT_MS,
      );
      this.pending.set(opId, { resolve, reject, timer });
      this.call.write({ op_id: opId, ...op });
    });
  }

  onAck(ack: Ack): void {
    const id = Number(ack.op_id);
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (ack.error) p.reject(errors.workerRejected(this.ip, ack.error));
    else p.resolve(ack);
  }

  fail(why: string): void {
    if (this.deadReason !== null) return;
    this.deadReason = why;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(errors.workerLost(this.ip, why));
    }
    this.pending.clear();
  }

  async activate(ref: ActorRef, seq: number): Promise<void> {
    await this.send({ activate: { atespace: ref.atespace, name: ref.name, seq } });
  }

  async deactivate(ref: ActorRef): Promise<{ seq: number }> {
    const ack = await this.send({ deactivate: { atespace: ref.atespace, name: ref.name } });
    return { seq: Number(ack.seq) };
  }

  async flush(): Promise<void> {
    await this.send({ flush: {} });
  }

  async setListening(listening: boolean): Promise<void> {
    await this.send({ set_listening: { listening } });
  }

  disconnect(why: string): void {
    this.kill(why, grpc.status.ABORTED);
  }
}

function validRegistration(reg: Register): void {
  if (!net.isIP(reg.ip)) throw errors.protocol(`register: ip "${reg.ip}" is not an IP address`);
  if (!(reg.port >= 1 && reg.port <= 65535)) throw errors.protocol(`register: port ${reg.port} out of range`);
  if (!(reg.capacity >= 1)) throw errors.protocol('register: capacity must be at least 1');
}

/** The Attach handler plus the set of open streams, so shutdown can end them instead of waiting on them. */
export class WorkersService {
  private readonly calls = new Set<AttachCall>();
  readonly attach: grpc.handleBidiStreamingCall<WorkerToControl, ControlToWorker>;

  constructor(cp: ControlPlane, counters: RpcCounters, log: Logger) {
    const handler = attachHandler(cp, counters, log, (call) => this.calls.delete(call));
    this.attach = (call) => {
      this.calls.add(call);
      handler(call);
    };
  }

  /** Ends every open Attach stream (status OK); workers see the control plane go away. */
  endAll(): void {
    for (const call of this.calls) if (call.writable) call.end();
    this.calls.clear();
  }
}

function attachHandler(
  cp: ControlPlane,
  counters: RpcCounters,
  log: Logger,
  onFinished: (call: AttachCall) => void,
): grpc.handleBidiStreamingCall<WorkerToControl, ControlToWorker> {
  return (call) => {
    let link: StreamLink | null = null;
    let worker: WorkerRecord | null = null;
    let finished = false;

    const finish = (why: string, status?: { code: grpc.status; details: string }): void => {
      if (finished) return;
      finished = true;
      onFinished(call);
      counters.count('Attach', status?.code ?? grpc.status.OK);
      if (link) {
        link.fail(why);
        if (worker) cp.workerDetached(worker, link, why);
      }
      if (status) call.emit('error', status);
      else if (call.writable) call.end();
    };

    call.on('data', (message: WorkerToControl) => {
      if (finished) return;
      try {
        if (!link) {
          if (!('register' in message) || message.msg !== 'register') throw errors.protocol('the first message must be register');
          const reg = message.register;
          validRegistration(reg);
          const candidate = new StreamLink(call, reg.ip, (why, code) => finish(why, { code, details: why }));
          worker = cp.workerAttached(reg.ip, reg.port, reg.capacity, candidate);
          link = candidate;
          call.write({ op_id: 0, registered: { worker: worker.pod } });
          return;
        }
        if (message.msg === 'ack' && 'ack' in message) link.onAck(message.ack);
        else if (message.msg === 'served' && 'served' in message && worker) cp.store.recordServed(worker, message.served);
        else throw errors.protocol(`unexpected message "${message.msg ?? 'none'}"`);
      } catch (err) {
        const e = asStubError(err);
        log.warn({ worker: worker?.ip, err: e.message }, 'attach stream rejected');
        finish(e.message, { code: e.code, details: e.message });
      }
    });
    call.on('end', () => finish('worker closed the stream'));
    call.on('error', (err: Error) => finish(`stream error: ${err.message}`));
    call.on('cancelled', () => finish('stream cancelled'));
  };
}
