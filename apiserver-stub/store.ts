/**
 * The control plane's in-memory state: actors (status, worker, version, lease, delivered request ids) and workers
 * (address, capacity, liveness, hosted actors, traffic counters). Plain data plus the small invariants that keep
 * it consistent (versions bump on every change, a worker slot is taken exactly once); the orchestration that
 * talks to workers lives in control-plane.ts.
 */
import { randomUUID } from 'node:crypto';
import { actorKey, type ActorRef } from '../lib/actor-ref.js';
import { CappedSet } from '../lib/capped-set.js';
import type { CheckedEgressPolicy } from '../lib/egress/policy.js';
import { errors } from './errors.js';

/** How many delivered request ids each actor remembers for duplicate detection (the oldest are forgotten). */
export const MAX_REQUEST_IDS_PER_ACTOR = 100_000;

export type ActorStatus = 'RESUMING' | 'RUNNING' | 'SUSPENDING' | 'SUSPENDED';

/** One outstanding operation on an actor (resume, suspend, move, delete). */
export interface Lease {
  readonly op: string;
  /** Resolves when the lease is released. */
  readonly released: Promise<void>;
  release(): void;
}

export interface ActorRecord {
  readonly ref: ActorRef;
  readonly key: string;
  readonly actorId: string;
  readonly templateNamespace: string;
  readonly templateName: string;
  status: ActorStatus;
  workerIp: string | null;
  version: number;
  /** Last request sequence number the actor handed out (its state, carried across activations). */
  seq: number;
  lease: Lease | null;
  /** x-request-id of the latest MAX_REQUEST_IDS_PER_ACTOR delivered requests (since the last stats reset). */
  readonly requestIds: CappedSet<string>;
  deleted: boolean;
  /** The actor's egress policy (none: it reaches nothing); it goes with the actor. */
  egressPolicy: StoredEgressPolicy | null;
}

export interface StoredEgressPolicy {
  readonly policy: CheckedEgressPolicy;
  /** Raised on every change: unique across the stub's lifetime, so a recreated actor's policy never repeats one. */
  readonly generation: number;
}

/** The control plane's handle on an attached worker (implemented over the Attach stream). */
export interface WorkerLink {
  activate(ref: ActorRef, seq: number): Promise<void>;
  /** Resolves with the actor's last sequence number. */
  deactivate(ref: ActorRef): Promise<{ seq: number }>;
  /** Resolves once every request the worker delivered so far has been reported. */
  flush(): Promise<void>;
  setListening(listening: boolean): Promise<void>;
  /** Ends the link (the worker sees its stream end with an error). */
  disconnect(why: string): void;
}

export interface WorkerRecord {
  readonly ip: string;
  port: number;
  capacity: number;
  readonly pod: string;
  readonly uid: string;
  link: WorkerLink | null;
  /** The Attach stream is up. */
  attached: boolean;
  /** The HTTP listener is open (false after POST /workers/:ip/stop). */
  listening: boolean;
  /** Actors placed on this worker (including one being activated). */
  readonly actors: Set<string>;
  requests: number;
  misdirected: number;
  version: number;
}

export interface ServedBatch {
  readonly actors: readonly { readonly actor: string; readonly request_ids: readonly string[]; readonly count: string | number; readonly last_seq: string | number }[];
  readonly requests: string | number;
  readonly misdirected: string | number;
}

export function workerAlive(w: WorkerRecord): boolean {
  return w.attached && w.listening;
}

function podName(ip: string): string {
  return `worker-${ip.replace(/[.:]/g, '-')}`;
}

export class Store {
  readonly actors = new Map<string, ActorRecord>();
  readonly workers = new Map<string, WorkerRecord>();
  /** Lifetime tallies (never reset; `/stats` reports them since its last reset). */
  deliveries = 0;
  duplicates = 0;
  placements = 0;

  // ---- actors ----

  createActor(ref: ActorRef, templateNamespace = '', templateName = ''): ActorRecord {
    const key = actorKey(ref);
    if (this.actors.has(key)) throw errors.actorExists(key);
    const actor: ActorRecord = {
      ref: Object.freeze({ atespace: ref.atespace, name: ref.name }),
      key,
      actorId: randomUUID(),
      templateNamespace,
      templateName,
      status: 'SUSPENDED',
      workerIp: null,
      version: 1,
      seq: 0,
      lease: null,
      requestIds: new CappedSet(MAX_REQUEST_IDS_PER_ACTOR),
      deleted: false,
      egressPolicy: null,
    };
    this.actors.set(key, actor);
    return actor;
  }

  requireActor(ref: ActorRef): ActorRecord {
    const actor = this.actors.get(actorKey(ref));
    if (!actor) throw errors.actorNotFound(actorKey(ref));
    return actor;
  }

  deleteActor(actor: ActorRecord): void {
    actor.deleted = true;
    actor.version++;
    this.actors.delete(actor.key);
  }

  /** Actors sorted by key, optionally of one atespace. */
  listActors(atespace?: string): ActorRecord[] {
    const all = [...this.actors.values()].filter((a) => !atespace || a.ref.atespace === atespace);
    return all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  setStatus(actor: ActorRecord, status: ActorStatus, workerIp: string | null): void {
    actor.status = status;
    actor.workerIp = workerIp;
    actor.version++;
  }

  /** Takes the actor's lease or throws ABORTED "another operation is in progress for this actor". */
  lease(actor: ActorRecord, op: string): Lease {
    if (actor.lease) throw errors.leaseConflict();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const lease: Lease = {
      op,
      released,
      release: () => {
        if (actor.lease === lease) actor.lease = null;
        release();
      },
    };
    actor.lease = lease;
    return lease;
  }

  /** Runs `operation` holding the actor's lease (throws ABORTED when another holds it); the lease is released however it ends. */
  async underLease<T>(actor: ActorRecord, op: string, operation: () => Promise<T>): Promise<T> {
    const lease = this.lease(actor, op);
    try {
      return await operation();
    } finally {
      lease.release();
    }
  }

  // ---- workers ----

  /** Registers (or re-registers after death) a worker. Throws ALREADY_EXISTS if a live link holds the IP. */
  attachWorker(ip: string, port: number, capacity: number, link: WorkerLink): WorkerRecord {
    const existing = this.workers.get(ip);
    if (existing?.attached) throw errors.workerExists(ip);
    if (existing) {
      existing.port = port;
      existing.capacity = capacity;
      existing.link = link;
      existing.attached = true;
      existing.listening = true;
      existing.version++;
      return existing;
    }
    const worker: WorkerRecord = {
      ip,
      port,
      capacity,
      pod: podName(ip),
      uid: randomUUID(),
      link,
      attached: true,
      listening: true,
      actors: new Set(),
      requests: 0,
      misdirected: 0,
      version: 1,
    };
    this.workers.set(ip, worker);
    return worker;
  }

  requireWorker(ip: string): WorkerRecord {
    const worker = this.workers.get(ip);
    if (!worker) throw errors.workerNotFound(ip);
    return worker;
  }

  /** Live workers with a free slot, excluding `exclude`. */
  freeWorkers(exclude?: string): WorkerRecord[] {
    const free: WorkerRecord[] = [];
    for (const w of this.workers.values()) {
      if (w.ip !== exclude && workerAlive(w) && w.actors.size < w.capacity) free.push(w);
    }
    return free;
  }

  /** Picks a free worker uniformly at random and takes one of its slots for `actor`, or throws RESOURCE_EXHAUSTED. */
  claimRandomWorker(actor: ActorRecord, exclude?: string): WorkerRecord {
    const free = this.freeWorkers(exclude);
    if (free.length === 0) throw errors.noFreeWorkers();
    const worker = free[Math.floor(Math.random() * free.length)]!;
    worker.actors.add(actor.key);
    worker.version++;
    return worker;
  }

  releaseSlot(workerIp: string | null, key: string): void {
    if (workerIp === null) return;
    const worker = this.workers.get(workerIp);
    if (worker?.actors.delete(key)) worker.version++;
  }

  // ---- deliveries ----

  recordServed(worker: WorkerRecord, batch: ServedBatch): void {
    worker.requests += Number(batch.requests);
    worker.misdirected += Number(batch.misdirected);
    for (const entry of batch.actors) {
      const actor = this.actors.get(entry.actor);
      this.deliveries += Number(entry.count);
      if (!actor) continue;
      const lastSeq = Number(entry.last_seq);
      if (lastSeq > actor.seq) actor.seq = lastSeq;
      const ids = actor.requestIds;
      for (const id of entry.request_ids) {
        if (ids.has(id)) this.duplicates++;
        else ids.add(id);
      }
    }
  }

  /** Forgets the delivery records (request ids, per-worker counts); the lifetime tallies are kept. */
  resetStats(): void {
    for (const a of this.actors.values()) a.requestIds.clear();
    for (const w of this.workers.values()) {
      w.requests = 0;
      w.misdirected = 0;
    }
  }
}
