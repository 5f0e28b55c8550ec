/**
 * Actors' egress policies as the control plane keeps them: one per actor (stored on the actor's record, so it goes
 * with the actor), checked with lib/egress/policy.ts's model, its generation raised on every change. No policy: the
 * actor reaches nothing. Used by the admin API (set, read, delete), by GetActorEgressPolicy and by the start-up seed.
 */
import { actorKey, type ActorRef } from '../lib/actor-ref.js';
import { EgressPolicyError, parseEgressPolicy, type CheckedEgressPolicy } from '../lib/egress/policy.js';
import { errors } from './errors.js';
import type { ActorRecord, Store, StoredEgressPolicy } from './store.js';

/** A policy as a client sent it, checked; a bad one is INVALID_ARGUMENT naming the field. */
export function checkedPolicy(body: unknown): CheckedEgressPolicy {
  try {
    return parseEgressPolicy(body);
  } catch (err) {
    if (err instanceof EgressPolicyError) throw errors.invalidArgument(`egress policy: ${err.message}`);
    throw err;
  }
}

export class EgressPolicies {
  /** The last generation handed out (stub-wide, so generations only go up, across actors and their recreation). */
  private generation = 0;

  constructor(private readonly store: Store) {}

  /** Replaces the actor's policy; NOT_FOUND for an unknown actor. */
  set(ref: ActorRef, policy: CheckedEgressPolicy): StoredEgressPolicy {
    return this.setOn(this.store.requireActor(ref), policy);
  }

  setOn(actor: ActorRecord, policy: CheckedEgressPolicy): StoredEgressPolicy {
    actor.egressPolicy = Object.freeze({ policy, generation: ++this.generation });
    return actor.egressPolicy;
  }

  /** The actor's policy; NOT_FOUND for an unknown actor and for an actor without one. */
  get(ref: ActorRef): StoredEgressPolicy {
    const stored = this.store.requireActor(ref).egressPolicy;
    if (stored === null) throw errors.noEgressPolicy(actorKey(ref));
    return stored;
  }

  /** Removes the actor's policy (it then reaches nothing); NOT_FOUND when it has none. */
  delete(ref: ActorRef): void {
    const actor = this.store.requireActor(ref);
    if (actor.egressPolicy === null) throw errors.noEgressPolicy(actor.key);
    actor.egressPolicy = null;
    this.generation++;
  }

  /** Actors that have a policy now. */
  count(): number {
    let n = 0;
    for (const a of this.store.actors.values()) if (a.egressPolicy !== null) n++;
    return n;
  }
}
