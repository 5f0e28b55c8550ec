/**
 * The control plane's operations, shared by the gRPC services, the admin API and churn: resume (RUNNING fast
 * path, or lease → random free worker → RESUMING → restore delay → activation acked by the worker → RUNNING),
 * suspend, move, delete, and the worker lifecycle (attach, death, stop, start). Every state change goes through
 * here so the actor table and what the workers serve never disagree for longer than one acknowledged operation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { actorKey, isResourceName, type ActorRef } from '../lib/actor-ref.js';
import type { Logger } from '../lib/logger.js';
import { EgressPolicies } from './egress-policies.js';
import { errors } from './errors.js';
import type { RuntimeSettings } from './settings.js';
import { Store, workerAlive, type ActorRecord, type WorkerLink, type WorkerRecord } from './store.js';

export interface ResumeResult {
  readonly actor: ActorRecord;
  /** false when the actor was already RUNNING. */
  readonly resumed: boolean;
}

async function delay(ms: number): Promise<void> {
  if (ms > 0) await sleep(ms);
}

/** Validates an ActorRef from a request: both parts present and DNS-1123 labels. */
export function validRef(ref: { atespace?: string; name?: string } | null | undefined): ActorRef {
  if (!ref) throw errors.invalidArgument('actor_ref is required');
  const atespace = ref.atespace ?? '';
  const name = ref.name ?? '';
  if (atespace === '') throw errors.invalidArgument('actor_ref.atespace is required');
  if (name === '') throw errors.invalidArgument('actor_ref.name is required');
  if (!isResourceName(atespace)) throw errors.invalidArgument(`actor_ref.atespace "${atespace}" is not a valid resource name (DNS-1123 label)`);
  if (!isResourceName(name)) throw errors.invalidArgument(`actor_ref.name "${name}" is not a valid resource name (DNS-1123 label)`);
  return { atespace, name };
}

function isRunning(actor: ActorRecord): boolean {
  return actor.status === 'RUNNING';
}

export class ControlPlane {
  moves = 0;
  /** Set while the stub shuts down: workers detaching then is expected, not news. */
  closing = false;
  /** Until this time (epoch ms) every ateapi.Control call answers UNAVAILABLE (admin `POST /outage`). */
  outageUntil = 0;
  /** Actors' egress policies (kept on their records). */
  readonly egress: EgressPolicies;

  constructor(
    readonly store: Store,
    readonly settings: RuntimeSettings,
    private readonly log: Logger,
  ) {
    this.egress = new EgressPolicies(store);
  }

  /** Throws UNAVAILABLE during an outage set through the admin API; workers stay attached meanwhile. */
  assertAvailable(): void {
    if (this.outageUntil > Date.now()) throw errors.controlUnavailable();
  }

  get(ref: ActorRef): ActorRecord {
    return this.store.requireActor(ref);
  }

  /**
   * A read as the gRPC API answers it: after the `readLatencyMs` delay (none by default). The delay does not hold
   * the process open: a read still waiting when the stub stops has no one left to answer.
   */
  read<T>(answer: () => T): T | Promise<T> {
    const ms = this.settings.readLatencyMs;
    return ms > 0 ? sleep(ms, undefined, { ref: false }).then(answer) : answer();
  }

  create(ref: ActorRef, templateNamespace = '', templateName = ''): ActorRecord {
    return this.store.createActor(ref, templateNamespace, templateName);
  }

  async resume(ref: ActorRef): Promise<ResumeResult> {
    const key = actorKey(ref);
    let actor = this.store.actors.get(key);
    if (!actor) {
      if (!this.settings.autoCreate) throw errors.actorNotFound(key);
      actor = this.store.createActor(ref);
    }
    if (actor.status === 'RUNNING') {
      // The lock-free fast path: a read, no lease, no change.
      await delay(this.settings.resolveLatencyMs);
      actor = this.store.actors.get(key);
      if (!actor) throw errors.actorNotFound(key);
      if (actor.status === 'RUNNING') return { actor, resumed: false };
    }
    const leased = actor;
    return this.store.underLease(leased, 'resume', async () => {
      // Re-read under the lease (another operation may have finished in between).
      if (isRunning(leased)) return { actor: leased, resumed: false };
      const worker = this.store.claimRandomWorker(leased);
      this.store.placements++;
      await this.restoreOn(leased, worker);
      return { actor: leased, resumed: true };
    });
  }

  async suspend(ref: ActorRef): Promise<ActorRecord> {
    const actor = this.store.requireActor(ref);
    await this.store.underLease(actor, 'suspend', () => this.suspendLeased(actor));
    return actor;
  }

  /** Suspends the actor and resumes it on another free worker, as one operation under one lease. */
  async move(ref: ActorRef): Promise<ActorRecord> {
    const actor = this.store.requireActor(ref);
    if (actor.status !== 'RUNNING') throw errors.notRunning(actor.key, actor.status);
    return this.store.underLease(actor, 'move', async () => {
      if (!isRunning(actor)) throw errors.notRunning(actor.key, actor.status);
      const from = actor.workerIp;
      const worker = this.store.claimRandomWorker(actor, from ?? undefined);
      this.store.setStatus(actor, 'SUSPENDING', from);
      await this.deactivateOn(from, actor);
      this.store.releaseSlot(from, actor.key);
      this.store.placements++;
      this.moves++;
      await this.restoreOn(actor, worker);
      return actor;
    });
  }

  async delete(ref: ActorRef): Promise<void> {
    const actor = this.store.requireActor(ref);
    await this.store.underLease(actor, 'delete', async () => {
      await this.suspendLeased(actor);
      this.store.deleteActor(actor);
    });
  }

  /** RESUMING on `worker` (whose slot is already claimed), restore delay, activation acked, RUNNING. */
  private async restoreOn(actor: ActorRecord, worker: WorkerRecord): Promise<void> {
    const link = worker.link;
    this.store.setStatus(actor, 'RESUMING', worker.ip);
    try {
      await delay(this.settings.coldResumeMs);
      if (!link || worker.link !== link || !worker.attached) throw errors.workerLost(worker.ip, 'detached during restore');
      await link.activate(actor.ref, actor.seq);
    } catch (err) {
      this.store.releaseSlot(worker.ip, actor.key);
      this.store.setStatus(actor, 'SUSPENDED', null);
      this.log.warn({ actor: actor.key, worker: worker.ip, err: (err as Error).message }, 'activation failed; actor suspended');
      throw err;
    }
    this.store.setStatus(actor, 'RUNNING', worker.ip);
  }

  private async suspendLeased(actor: ActorRecord): Promise<void> {
    if (actor.status === 'SUSPENDED') return;
    const from = actor.workerIp;
    this.store.setStatus(actor, 'SUSPENDING', from);
    await this.deactivateOn(from, actor);
    this.store.releaseSlot(from, actor.key);
    this.store.setStatus(actor, 'SUSPENDED', null);
  }

  /** Deactivates the actor on its worker; a worker that is gone serves nothing, so its failure is not an error. */
  private async deactivateOn(ip: string | null, actor: ActorRecord): Promise<void> {
    const worker = ip === null ? undefined : this.store.workers.get(ip);
    if (!worker?.attached || !worker.link) return;
    try {
      const { seq } = await worker.link.deactivate(actor.ref);
      if (seq > actor.seq) actor.seq = seq;
    } catch (err) {
      this.log.warn({ actor: actor.key, worker: worker.ip, err: (err as Error).message }, 'deactivation failed');
    }
  }

  // ---- workers ----

  /**
   * A worker registered. One IP is one worker: a registration for an IP whose previous stream still looks alive
   * (a restarted container whose old connection has not timed out yet) replaces it, and the old one is dead.
   */
  workerAttached(ip: string, port: number, capacity: number, link: WorkerLink): WorkerRecord {
    const previous = this.store.workers.get(ip);
    if (previous?.attached && previous.link) {
      const old = previous.link;
      this.workerDetached(previous, old, 'replaced by a new registration for the same IP');
      old.disconnect('replaced by a new registration for the same IP');
    }
    const worker = this.store.attachWorker(ip, port, capacity, link);
    this.log.debug({ worker: ip, port, capacity }, 'worker attached');
    return worker;
  }

  /** The worker's Attach stream ended: it is dead, and every actor it hosted is SUSPENDED. */
  workerDetached(worker: WorkerRecord, link: WorkerLink, why: string): void {
    if (worker.link !== link) return;
    worker.link = null;
    worker.attached = false;
    worker.version++;
    let suspended = 0;
    for (const key of [...worker.actors]) {
      const actor = this.store.actors.get(key);
      // A leased actor is mid-operation; its holder sees the link fail and cleans up.
      if (actor?.lease) continue;
      this.store.releaseSlot(worker.ip, key);
      if (actor && actor.workerIp === worker.ip) {
        this.store.setStatus(actor, 'SUSPENDED', null);
        suspended++;
      }
    }
    if (this.closing) this.log.debug({ worker: worker.ip, why }, 'worker detached during shutdown');
    else this.log.warn({ worker: worker.ip, why, suspended }, 'worker detached: marked dead');
  }

  /** Closes the worker's listener (connections refused, open ones destroyed) and suspends its actors. */
  async stopWorker(ip: string): Promise<WorkerRecord> {
    const worker = this.store.requireWorker(ip);
    worker.listening = false;
    worker.version++;
    if (worker.attached && worker.link) {
      try {
        await worker.link.setListening(false);
      } catch (err) {
        this.log.warn({ worker: ip, err: (err as Error).message }, 'stop: worker did not acknowledge');
      }
    }
    await this.evacuate(worker);
    this.log.info({ worker: ip }, 'worker stopped');
    return worker;
  }

  async startWorker(ip: string): Promise<WorkerRecord> {
    const worker = this.store.requireWorker(ip);
    if (!worker.attached || !worker.link) throw errors.workerNotAttached(ip);
    await worker.link.setListening(true);
    worker.listening = true;
    worker.version++;
    this.log.info({ worker: ip }, 'worker started');
    return worker;
  }

  /** Suspends every actor on `worker`, waiting out operations already in progress on them. */
  private async evacuate(worker: WorkerRecord): Promise<void> {
    while (worker.actors.size > 0) {
      for (const key of [...worker.actors]) {
        const actor = this.store.actors.get(key);
        if (!actor) {
          this.store.releaseSlot(worker.ip, key);
          continue;
        }
        if (actor.lease) {
          await actor.lease.released;
          continue;
        }
        if (actor.workerIp !== worker.ip) {
          this.store.releaseSlot(worker.ip, key);
          continue;
        }
        await this.store.underLease(actor, 'suspend', () => this.suspendLeased(actor));
      }
    }
  }

  /** Asks every attached worker to report what it delivered so far (bounded wait; failures ignored). */
  async flushWorkers(timeoutMs = 1000): Promise<void> {
    const flushes = [...this.store.workers.values()]
      .filter((w) => w.attached && w.link)
      .map((w) => w.link!.flush().catch(() => undefined));
    if (flushes.length === 0) return;
    await Promise.race([Promise.all(flushes), sleep(timeoutMs, undefined, { ref: false })]);
  }

  /** Live workers, for churn and stats. */
  liveWorkers(): WorkerRecord[] {
    return [...this.store.workers.values()].filter(workerAlive);
  }
}
