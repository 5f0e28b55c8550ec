/**
 * Start-up actors: `--actors N` in `--atespace`, named actor-000 … (wider than 3 digits when N > 1000), SUSPENDED,
 * each with the egress policy `--seed-egress-policies` gives it (if any).
 */
import type { EgressPolicies } from './egress-policies.js';
import { NO_EGRESS_SEED, seededPolicy, type EgressSeed } from './egress-seed.js';
import type { Store } from './store.js';

export function seedActorNames(count: number): string[] {
  const width = Math.max(3, String(Math.max(0, count - 1)).length);
  return Array.from({ length: count }, (_, i) => `actor-${String(i).padStart(width, '0')}`);
}

export function seedActors(store: Store, atespace: string, count: number, egress?: EgressPolicies, seed: EgressSeed = NO_EGRESS_SEED): void {
  for (const name of seedActorNames(count)) {
    const actor = store.createActor({ atespace, name });
    const policy = seededPolicy(seed, name);
    if (policy !== undefined && egress !== undefined) egress.setOn(actor, policy);
  }
}
