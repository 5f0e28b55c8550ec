/**
 * The actors a worker serves right now, and what it delivered to them since its last report. The request path
 * touches only `get` and `Activation.deliver`: a map lookup, a counter and an array push. The ids waiting for a
 * report are capped per actor (`pendingIdLimit`, the report batch): a report is due long before, so the cap only
 * matters when reports cannot go out; ids past it are not kept (the delivery is still counted).
 */
import { actorKey, type ActorRef } from '../../lib/actor-ref.js';
import type { Served } from '../atestub-types.js';

const DEFAULT_PENDING_ID_LIMIT = 4096;

export class Activation {
  readonly key: string;
  /** Last sequence number handed out; the next request gets seq + 1. */
  seq: number;
  active = true;
  /** Responses still being produced (delayed, streamed or reading a body); destroyed on deactivation. */
  readonly inflight = new Set<{ destroy(): void }>();
  /** Open WebSockets (`websocket.ts`); closed on deactivation. */
  readonly sockets = new Set<{ terminate(): void }>();
  pendingIds: string[] = [];
  pendingCount = 0;

  constructor(
    readonly ref: ActorRef,
    seq: number,
    private readonly table: ActivationTable,
  ) {
    this.key = actorKey(ref);
    this.seq = seq;
  }

  /** Records one delivery; returns its sequence number. */
  deliver(requestId: string | undefined): number {
    const table = this.table;
    if (this.pendingCount === 0) table.dirty.add(this);
    this.pendingCount++;
    if (requestId !== undefined && this.pendingIds.length < table.pendingIdLimit) this.pendingIds.push(requestId);
    if (++table.requests === table.batchLimit) table.onBatchFull?.();
    return ++this.seq;
  }
}

export class ActivationTable {
  private readonly byKey = new Map<string, Activation>();
  /** Activations (current or just deactivated) with deliveries not yet reported. */
  readonly dirty = new Set<Activation>();
  requests = 0;
  misdirected = 0;
  /** Called once when `requests` since the last drain reaches `batchLimit` (the owner reports early). */
  onBatchFull: (() => void) | undefined;
  /** Most request ids one activation keeps until the next drain. */
  readonly pendingIdLimit: number;

  constructor(
    readonly capacity: number,
    readonly batchLimit = Infinity,
  ) {
    this.pendingIdLimit = Number.isFinite(batchLimit) ? batchLimit : DEFAULT_PENDING_ID_LIMIT;
  }

  get(key: string): Activation | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** Activates `ref` (idempotent); throws when the worker is full. */
  activate(ref: ActorRef, seq: number): Activation {
    const key = actorKey(ref);
    const existing = this.byKey.get(key);
    if (existing) return existing;
    if (this.byKey.size >= this.capacity) throw new Error(`worker at capacity (${this.capacity})`);
    const activation = new Activation(ref, seq, this);
    this.byKey.set(key, activation);
    return activation;
  }

  /** Stops serving `key` and cancels its in-flight responses. */
  deactivate(key: string): Activation | undefined {
    const activation = this.byKey.get(key);
    if (!activation) return undefined;
    this.byKey.delete(key);
    activation.active = false;
    for (const res of activation.inflight) res.destroy();
    activation.inflight.clear();
    for (const ws of activation.sockets) ws.terminate();
    activation.sockets.clear();
    return activation;
  }

  deactivateAll(): void {
    for (const key of [...this.byKey.keys()]) this.deactivate(key);
  }

  /** Deliveries and counters since the last call, or null when there is nothing to report. */
  drain(): Served | null {
    if (this.dirty.size === 0 && this.requests === 0 && this.misdirected === 0) return null;
    const served: Served = { actors: [], requests: this.requests, misdirected: this.misdirected };
    for (const a of this.dirty) {
      served.actors.push({ actor: a.key, request_ids: a.pendingIds, count: a.pendingCount, last_seq: a.seq });
      a.pendingIds = [];
      a.pendingCount = 0;
    }
    this.dirty.clear();
    this.requests = 0;
    this.misdirected = 0;
    return served;
  }
}
