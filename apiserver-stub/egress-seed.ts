/**
 * `--seed-egress-policies`: the egress policies the seeded actors start with, as one JSON object whose keys are
 * seeded actor names (or `*`: every seeded actor without an entry of its own) and whose values are policies in
 * lib/egress/policy.ts's JSON, e.g.
 * `{"actor-000":{"rules":[{"kind":"cidrs","cidrs":["127.0.0.1/32"],"ports":[9000]}]},"*":{"rules":[]}}`.
 * An actor that no key covers has no policy (it reaches nothing).
 */
import { isResourceName } from '../lib/actor-ref.js';
import { EgressPolicyError, parseEgressPolicy, type CheckedEgressPolicy } from '../lib/egress/policy.js';
import { UsageError } from '../lib/flags.js';

export const EVERY_SEEDED_ACTOR = '*';

export interface EgressSeed {
  /** By seeded actor name. */
  readonly byName: ReadonlyMap<string, CheckedEgressPolicy>;
  /** For every seeded actor not in `byName`; undefined: those have none. */
  readonly others: CheckedEgressPolicy | undefined;
  /** The flag's JSON again (what `validate` prints as the effective configuration). */
  toJSON(): Record<string, { readonly rules: CheckedEgressPolicy['rules'] }>;
}

function egressSeed(byName: ReadonlyMap<string, CheckedEgressPolicy>, others: CheckedEgressPolicy | undefined): EgressSeed {
  return Object.freeze({
    byName,
    others,
    toJSON: () => {
      const out: Record<string, { readonly rules: CheckedEgressPolicy['rules'] }> = {};
      for (const [name, policy] of byName) out[name] = { rules: policy.rules };
      if (others !== undefined) out[EVERY_SEEDED_ACTOR] = { rules: others.rules };
      return out;
    },
  });
}

export const NO_EGRESS_SEED: EgressSeed = egressSeed(new Map(), undefined);

/**
 * Parses the flag's value (`''`: no policies). `seededNames` lists the seeded actors: a key naming any other actor
 * is an error (it would silently do nothing). Throws UsageError naming the flag and the key.
 */
export function parseEgressSeed(text: string, seededNames: () => readonly string[], flag = '--seed-egress-policies'): EgressSeed {
  if (text.trim() === '') return NO_EGRESS_SEED;
  const seeded = seededNames();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag}: not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${flag}: expected a JSON object of actor name (or "*") → policy, such as {"actor-000":{"rules":[...]}}`);
  }
  const known = new Set(seeded);
  const byName = new Map<string, CheckedEgressPolicy>();
  let others: CheckedEgressPolicy | undefined;
  for (const [key, body] of Object.entries(value as Record<string, unknown>)) {
    if (key !== EVERY_SEEDED_ACTOR && !isResourceName(key)) throw new UsageError(`${flag}: "${key}" is not an actor name (nor "*")`);
    if (key !== EVERY_SEEDED_ACTOR && !known.has(key)) {
      const range = seeded.length === 0 ? 'no actors are seeded' : `the seeded actors are ${seeded[0]} … ${seeded[seeded.length - 1]}`;
      throw new UsageError(`${flag}: "${key}" is not a seeded actor (${range})`);
    }
    let policy: CheckedEgressPolicy;
    try {
      policy = parseEgressPolicy(body);
    } catch (err) {
      if (err instanceof EgressPolicyError) throw new UsageError(`${flag}: "${key}": ${err.message}`);
      throw err;
    }
    if (key === EVERY_SEEDED_ACTOR) others = policy;
    else byName.set(key, policy);
  }
  return egressSeed(byName, others);
}

/** The policy `seed` gives seeded actor `name`, if any. */
export function seededPolicy(seed: EgressSeed, name: string): CheckedEgressPolicy | undefined {
  return seed.byName.get(name) ?? seed.others;
}
