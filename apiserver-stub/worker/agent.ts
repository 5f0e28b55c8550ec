/**
 * One simulated worker: an HTTP listener serving the actors active here, attached to the control plane through
 * atestub.Workers/Attach. In-process workers (inside apiserver-stub) and `actor-edge worker` processes both run
 * this class, so both follow one code path. When the stream breaks the worker drops every activation (the control
 * plane has suspended them) and re-attaches with backoff.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../lib/logger.js';
import { workersClientConstructor, type ControlToWorker, type WorkerToControl, type WorkersClient } from '../atestub-types.js';
import { ActivationTable } from './activations.js';
import { WorkerListener } from './listener.js';
import { createRequestHandler } from './request-handler.js';
import { createStreamHandler } from './stream-handler.js';
import type { WorkerTls } from './tls.js';
import { createWebSocketHandler } from './websocket.js';

export interface WorkerAgentOptions {
  /** Control plane gRPC address, host:port. */
  readonly apiserver: string;
  /** The IP the control plane hands out for this worker. */
  readonly advertiseIp: string;
  /** The IP the HTTP listener binds (default: advertiseIp). */
  readonly listenIp?: string;
  /** HTTP port (0: the OS chooses; the bound port is registered). */
  readonly port: number;
  readonly capacity: number;
  readonly actorSuffix: string;
  readonly log: Logger;
  /**
   * Deliveries are reported at least this often (default 1 s), and as soon as `reportBatch` requests (default
   * 4096) are pending. Whoever needs them sooner asks: the control plane flushes every worker before it answers
   * /stats, /stats/reset, /actors and /workers, and a deactivation reports before its ack.
   */
  readonly reportIntervalMs?: number;
  readonly reportBatch?: number;
  /** mTLS on the HTTP listener; absent: plain HTTP. */
  readonly tls?: WorkerTls;
}

const REPORT_INTERVAL_MS = 1000;
const REPORT_BATCH = 4096;

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 2000;

type AttachStream = grpc.ClientDuplexStream<WorkerToControl, ControlToWorker>;

export class WorkerAgent {
  readonly table: ActivationTable;
  readonly listener: WorkerListener;
  private readonly client: WorkersClient;
  private stream: AttachStream | null = null;
  private closing = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private attachedOnce: Promise<void>;
  private resolveAttached!: () => void;
  private attached = false;
  private batchQueued = false;

  constructor(private readonly opts: WorkerAgentOptions) {
    this.table = new ActivationTable(opts.capacity, opts.reportBatch ?? REPORT_BATCH);
    this.table.onBatchFull = () => {
      if (!this.batchQueued) {
        this.batchQueued = true;
        setImmediate(() => {
          this.batchQueued = false;
          this.report();
        });
      }
    };
    const handler = createRequestHandler(opts.advertiseIp, this.table, opts.actorSuffix);
    const streamHandler = createStreamHandler(opts.advertiseIp, this.table, opts.actorSuffix);
    const upgrade = createWebSocketHandler(opts.advertiseIp, this.table, opts.actorSuffix);
    this.listener = new WorkerListener(handler, opts.listenIp ?? opts.advertiseIp, opts.port, { tls: opts.tls, upgrade, streamHandler });
    const Client = workersClientConstructor();
    this.client = new Client(opts.apiserver, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
    }) as unknown as WorkersClient;
    this.attachedOnce = new Promise((resolve) => (this.resolveAttached = resolve));
  }

  get ip(): string {
    return this.opts.advertiseIp;
  }

  get isAttached(): boolean {
    return this.attached;
  }

  /** Opens the HTTP listener and starts attaching (retrying until it succeeds). */
  async start(): Promise<void> {
    await this.listener.open();
    this.reportTimer = setInterval(() => this.report(), this.opts.reportIntervalMs ?? REPORT_INTERVAL_MS);
    this.reportTimer.unref();
    this.connect();
  }

  /** Resolves once the control plane has acknowledged the first registration. */
  whenAttached(): Promise<void> {
    return this.attachedOnce;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.reportTimer);
    const stream = this.stream;
    this.stream = null;
    if (stream) {
      this.report(stream);
      stream.end();
      stream.cancel();
    }
    this.table.deactivateAll();
    await this.listener.close();
    this.client.close();
  }

  private connect(): void {
    if (this.closing) return;
    const stream = this.client.Attach();
    this.stream = stream;
    let broken = false;
    const onBroken = (why: string): void => {
      if (broken) return;
      broken = true;
      if (this.stream === stream) this.stream = null;
      const wasAttached = this.attached;
      this.attached = false;
      this.table.deactivateAll();
      this.table.drain(); // undeliverable: the control plane considers this worker dead
      if (this.closing) return;
      if (wasAttached) this.opts.log.warn({ worker: this.ip, why }, 'detached from control plane; re-attaching');
      else this.opts.log.debug({ worker: this.ip, why }, 'attach failed; retrying');
      this.reconnectTimer = setTimeout(() => this.reattach(), this.reconnectDelay);
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
    };
    stream.on('data', (message: ControlToWorker) => this.onMessage(stream, message));
    stream.on('error', (err: grpc.ServiceError) => {
      // UNAVAILABLE: the control plane is not (yet) reachable, which a retry fixes; anything else is worth a word.
      if (!this.closing && err.code !== grpc.status.UNAVAILABLE && err.code !== grpc.status.CANCELLED) {
        this.opts.log.warn({ worker: this.ip, code: grpc.status[err.code], err: err.details }, 'control plane refused the attach stream');
      }
      onBroken(err.details || err.message);
    });
    stream.on('end', () => onBroken('control plane ended the stream'));
    stream.on('close', () => onBroken('stream closed'));
    stream.write({ register: { ip: this.opts.advertiseIp, port: this.listener.boundPort, capacity: this.opts.capacity } });
  }

  private reattach(): void {
    // A worker re-registers as fresh and listening.
    this.listener.open().then(
      () => this.connect(),
      (err: Error) => {
        this.opts.log.error({ worker: this.ip, err: err.message }, 'cannot reopen listener');
        this.reconnectTimer = setTimeout(() => this.reattach(), RECONNECT_MAX_MS);
      },
    );
  }

  private send(stream: AttachStream, message: WorkerToControl): void {
    if (stream.writable) stream.write(message);
  }

  /** Sends pending deliveries on `stream` (default: the current stream). */
  private report(stream: AttachStream | null = this.attached ? this.stream : null): void {
    if (!stream) return;
    const served = this.table.drain();
    if (served) this.send(stream, { served });
  }

  private ack(stream: AttachStream, opId: string | number, error = '', seq = 0): void {
    this.send(stream, { ack: { op_id: opId, error, seq } });
  }

  private onMessage(stream: AttachStream, message: ControlToWorker): void {
    if (this.stream !== stream) return;
    const opId = message.op_id;
    switch (message.op) {
      case 'registered':
        this.attached = true;
        this.reconnectDelay = RECONNECT_MIN_MS;
        this.opts.log.debug({ worker: this.ip }, 'attached to control plane');
        this.resolveAttached();
        return;
      case 'activate': {
        const { atespace, name, seq } = message.activate;
        try {
          this.table.activate({ atespace, name }, Number(seq));
          this.ack(stream, opId);
        } catch (err) {
          this.ack(stream, opId, (err as Error).message);
        }
        return;
      }
      case 'deactivate': {
        const { atespace, name } = message.deactivate;
        const activation = this.table.deactivate(`${atespace}/${name}`);
        this.report(stream);
        this.ack(stream, opId, '', activation?.seq ?? 0);
        return;
      }
      case 'flush':
        this.report(stream);
        this.ack(stream, opId);
        return;
      case 'set_listening': {
        const listening = message.set_listening.listening;
        this.listener.setListening(listening).then(
          () => {
            this.opts.log.info({ worker: this.ip, listening }, listening ? 'listener opened' : 'listener closed');
            if (this.stream === stream) this.ack(stream, opId);
          },
          (err: Error) => {
            if (this.stream === stream) this.ack(stream, opId, err.message);
          },
        );
        return;
      }
      default:
        this.opts.log.warn({ worker: this.ip, op: message.op }, 'unknown operation');
        this.ack(stream, opId, `unknown operation "${String(message.op)}"`);
    }
  }

}
