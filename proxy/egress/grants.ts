/**
 * The grants of this process: for every key (certificate digest and destination) with a tunnel open, or a CONNECT
 * allowed and about to open one, the lease that granted them (`Lease`: the cache entry's origin, generation and
 * expiry; cache off, one made for the allow) and the tunnels it holds. One grant per key, however many tunnels:
 * - it is re-validated through ext_proc ahead of its lease's expiry (`grant-schedule.ts`), one stream per key per TTL
 *   (through the decider, so it shares a CONNECT's miss for the key in flight, and with the cache its allow renews
 *   the entry every process reads);
 * - an allow (its re-validation's, or any fresher one: a CONNECT's miss, another process's) renews the lease;
 * - a CONNECT decided on its traffic (hostname rules) holds its key's grant like any other, from its 200 on (while
 *   its first bytes are read, with the rules they are read against), then with the hostname it was allowed for: a
 *   fresher verdict that is hostname rules again checks that hostname against them. A tunnel whose hostname they
 *   still match is kept (and the lease renewed); one they no longer match, or one allowed outright (never read for a
 *   hostname), is closed (`revoked-denied`), and when none is kept the grant ends. A CONNECT whose first bytes are
 *   still being read is kept, and its name is decided by the fresher rules;
 * - a denial, the actor found not running or unknown, a revoke, or the certificate's NotAfter ends it: every tunnel
 *   it holds is closed with that reason (`revocation.ts`), and a CONNECT allowed by it but not yet open is refused;
 * - a re-validation that fails (the control plane or ext_proc unavailable) keeps the tunnels open while the lease
 *   lasts, is tried again, and when the lease runs out unrenewed the tunnels are closed (`revalidation-failed`):
 *   fail closed, as a CONNECT asked then is, one TTL plus one round trip at most after the last renewal.
 * A grant whose last tunnel closed is forgotten (an idle key is never re-validated).
 */
import type { Logger } from 'pino';
import { SinceReset } from '../../lib/since-reset.js';
import type { EgressDecider } from './egress-decider.js';
import { revalidationTallies, type EgressCloseReason, type RevalidationCount } from './egress-stats.js';
import type { GrantListener } from './grant-signals.js';
import { nextGrantStep } from './grant-schedule.js';
import { observedName } from '../../lib/egress/hostname-pattern.js';
import { decideHostname, type HostnameCandidate } from '../../lib/egress/policy.js';
import { revocationOf, type EgressRevocation } from './revocation.js';
import { keyId, matchesFilter, type EgressKey, type EgressVerdict, type Lease, type Resolution, type VerdictFilter } from './verdict-cache.js';

/** What a grant closes: an egress tunnel. */
export interface GrantedTunnel {
  close(reason: EgressCloseReason): void;
}

/** Why a grant ended: a revocation, or an error inside the proxy while it acted. */
export type GrantEnd = EgressRevocation | 'internal';

/** One CONNECT's part in its key's grant, from its allow until it is over. */
export interface GrantHold {
  /** The lease that allowed this CONNECT (the entry and generation that granted its tunnel). */
  readonly lease: Lease;
  /**
   * The hostname its tunnel was allowed for (decided on its traffic), as the actor sent it; undefined: allowed
   * outright, or its first bytes not read yet.
   */
  readonly hostname: string | undefined;
  /**
   * Decided on its traffic: its first bytes allowed `name` by the rules it was read against. Checks `name` against
   * the freshest rules its grant heard meanwhile; when they no longer allow it this CONNECT's part ends
   * (`revoked-denied`). Either way `ended` says whether it may open.
   */
  allowFor(name: string): void;
  /**
   * Set once the grant has ended, or this CONNECT's part in it (its hostname no longer allowed): a CONNECT not yet
   * open is refused rather than opened.
   */
  readonly ended: GrantEnd | undefined;
  /** The tunnel opened: closed with the grant from now on (at once when it has ended already). */
  attach(tunnel: GrantedTunnel): void;
  /** The CONNECT is over (refused, cancelled, or its tunnel closed). Idempotent. */
  release(): void;
}

/** One re-validation's slow path: one ext_proc stream for the grant's certificate and destination. */
export type GrantAsk = (question: GrantQuestion, signal: AbortSignal) => Promise<Resolution>;

/** What a grant asks ext_proc again: the CONNECT that opened its first tunnel. */
export interface GrantQuestion {
  readonly destination: string;
  readonly certificatePem: string;
}

export interface EgressGrantsDeps {
  readonly decider: Pick<EgressDecider, 'revalidate' | 'ttlMs'>;
  readonly ask: GrantAsk;
  /** Wall clock, the cache's (default `Date.now`). */
  readonly now?: () => number;
  /** Runs a timer's work inside the containment boundary (`fail` ends that grant alone). */
  readonly contained?: (fail: () => void, fn: () => void) => () => void;
  readonly log?: Logger;
}


/** The longest a node timer may be set for; a later step is re-armed when it fires. */
const MAX_TIMER_MS = 2_147_483_647;

/** What a hold tells its grants: its CONNECT is over; its name is no longer allowed by the freshest rules. */
interface HoldEvents {
  released(grant: Grant, hold: Hold): void;
  refused(grant: Grant, hold: Hold): void;
}

class Hold implements GrantHold {
  tunnel: GrantedTunnel | undefined;
  released = false;
  /** This CONNECT's part ended while its grant goes on (its hostname no longer allowed). */
  revoked: GrantEnd | undefined;
  hostname: string | undefined;

  constructor(
    private readonly grant: Grant,
    readonly lease: Lease,
    /** Decided on its traffic: the freshest rules its name is judged by; undefined: allowed outright. */
    private rules: readonly HostnameCandidate[] | undefined,
    private readonly on: HoldEvents,
  ) {}

  get ended(): GrantEnd | undefined {
    return this.grant.ended ?? this.revoked;
  }

  /**
   * Whether fresher hostname rules keep this CONNECT: one allowed for a hostname they match, or one whose first bytes
   * are still being read (they are judged by these rules from now on). One allowed outright is not kept.
   */
  keptBy(rules: readonly HostnameCandidate[]): boolean {
    if (this.rules === undefined) return false;
    if (this.hostname === undefined) {
      this.rules = rules;
      return true;
    }
    return decideHostname(rules, observedName(this.hostname)) !== undefined;
  }

  allowFor(name: string): void {
    if (this.released || this.rules === undefined || this.hostname !== undefined) return;
    this.hostname = name;
    if (this.ended === undefined && decideHostname(this.rules, observedName(name)) === undefined) this.on.refused(this.grant, this);
  }

  attach(tunnel: GrantedTunnel): void {
    if (this.released) return;
    const ended = this.ended;
    if (ended !== undefined) return tunnel.close(ended);
    this.tunnel = tunnel;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.tunnel = undefined;
    this.on.released(this.grant, this);
  }
}

class Grant {
  readonly holds = new Set<Hold>();
  timer: NodeJS.Timeout | undefined;
  revalidating = false;
  /** Failed re-validations of the current lease. */
  failures = 0;
  ended: GrantEnd | undefined;

  constructor(
    readonly id: string,
    readonly key: EgressKey,
    readonly certNotAfterMs: number,
    readonly question: GrantQuestion,
    public lease: Lease,
  ) {}
}

export class EgressGrants implements GrantListener {
  readonly #deps: EgressGrantsDeps;
  readonly #now: () => number;
  readonly #grants = new Map<string, Grant>();
  /** Certificate digest → how many grants of it are held. */
  readonly #byCert = new Map<string, number>();
  /** Re-validations by result: the lease renewed, the grant ended by the answer, or no answer that decides. */
  readonly #counts = revalidationTallies();
  readonly #sinceReset = new SinceReset(() => this.#counts);
  readonly #closing = new AbortController();
  #inFlight = 0;

  constructor(deps: EgressGrantsDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /**
   * A CONNECT allowed under `lease` takes part in its key's grant (made now when there is none; a fresher lease
   * renews it). `question`: what a re-validation asks; `rules`: a CONNECT decided on its traffic, the hostname rules
   * its first bytes are read against (then `allowFor`); undefined for a CONNECT allowed outright.
   */
  hold(key: EgressKey, certNotAfterMs: number, question: GrantQuestion, lease: Lease, rules?: readonly HostnameCandidate[]): GrantHold {
    const id = keyId(key);
    let grant = this.#grants.get(id);
    if (grant === undefined) {
      grant = new Grant(id, key, certNotAfterMs, question, lease);
      this.#grants.set(id, grant);
      this.#byCert.set(key.certDigest, (this.#byCert.get(key.certDigest) ?? 0) + 1);
      this.#schedule(grant);
    } else {
      this.#renew(grant, lease);
    }
    const hold = new Hold(grant, lease, rules, {
      released: (g, h) => this.#released(g, h),
      refused: (g, h) => void this.#revokeHolds(g, [h], 'revoked-denied'),
    });
    grant.holds.add(hold);
    return hold;
  }

  // GrantListener: what the signals hand over.

  verdict(key: EgressKey, verdict: EgressVerdict, lease: Lease | undefined): void {
    const grant = this.#grants.get(keyId(key));
    if (grant === undefined) return;
    if (verdict.kind === 'allow') {
      if (lease !== undefined) this.#renew(grant, lease);
      return;
    }
    if (verdict.kind === 'hostnames') {
      this.#recheck(grant, verdict.rules, lease);
      return;
    }
    const reason = revocationOf(verdict);
    if (reason !== undefined) this.#end(grant, reason);
  }

  revoke(filter: VerdictFilter, reason: EgressRevocation): number {
    let closed = 0;
    for (const grant of [...this.#grants.values()]) if (matchesFilter(filter, grant.key)) closed += this.#end(grant, reason);
    return closed;
  }

  holdsCertificate(certDigest: string): boolean {
    return this.#byCert.has(certDigest);
  }

  /** Keys with a grant held now. */
  get size(): number {
    return this.#grants.size;
  }

  /** Re-validations in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  stats(): Record<RevalidationCount, number> {
    return this.#sinceReset.current();
  }

  lifetimeStats(): Record<RevalidationCount, number> {
    return { ...this.#counts };
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }

  /** Stops every schedule and aborts the re-validations in flight (the tunnels are the listener's to close). */
  close(): void {
    this.#closing.abort();
    for (const grant of this.#grants.values()) clearTimeout(grant.timer);
    this.#grants.clear();
    this.#byCert.clear();
  }

  #live(grant: Grant): boolean {
    return grant.ended === undefined && this.#grants.get(grant.id) === grant;
  }

  /** A fresher lease (a later expiry, or another entry expiring as late) replaces the grant's and restarts its schedule. */
  #renew(grant: Grant, lease: Lease): void {
    const current = grant.lease;
    if (lease.expiresAtMs < current.expiresAtMs) return;
    if (lease.expiresAtMs === current.expiresAtMs && lease.origin === current.origin && lease.generation === current.generation) return;
    grant.lease = lease;
    grant.failures = 0;
    this.#schedule(grant);
  }

  #schedule(grant: Grant): void {
    clearTimeout(grant.timer);
    grant.timer = undefined;
    if (!this.#live(grant) || grant.revalidating || this.#closing.signal.aborted) return;
    const now = this.#now();
    const step = nextGrantStep(grant.lease, this.#deps.decider.ttlMs, grant.certNotAfterMs, now, grant.failures);
    const delay = Math.max(0, step.atMs - now);
    const act = (): void => {
      grant.timer = undefined;
      if (!this.#live(grant)) return;
      if (delay > MAX_TIMER_MS) return this.#schedule(grant);
      if (step.kind === 'revalidate') this.#revalidate(grant);
      else this.#end(grant, step.reason);
    };
    const contained = this.#deps.contained?.(() => this.#end(grant, 'internal'), act) ?? act;
    grant.timer = setTimeout(contained, Math.min(delay, MAX_TIMER_MS));
  }

  #revalidate(grant: Grant): void {
    grant.revalidating = true;
    this.#inFlight += 1;
    const leaseAsked = grant.lease;
    const slowPath = (): Promise<Resolution> => this.#deps.ask(grant.question, this.#closing.signal);
    void this.#deps.decider
      .revalidate(grant.key, grant.certNotAfterMs, slowPath)
      .then(
        (d) => ({ verdict: d.verdict, lease: d.lease }),
        (err: unknown) => {
          this.#deps.log?.debug({ err: (err as Error)?.message ?? String(err) }, 'egress grant re-validation failed');
          return { verdict: undefined, lease: undefined };
        },
      )
      .then(({ verdict, lease }) => {
        grant.revalidating = false;
        this.#inFlight -= 1;
        if (this.#closing.signal.aborted) return;
        this.#revalidated(grant, leaseAsked, verdict, lease);
      });
  }

  #revalidated(grant: Grant, leaseAsked: Lease, verdict: EgressVerdict | undefined, lease: Lease | undefined): void {
    const reason = verdict === undefined ? undefined : revocationOf(verdict);
    if (verdict?.kind === 'hostnames') {
      // The signals may have checked it already (the same verdict, learned): then this finds what they left. A grant
      // forgotten meanwhile (its CONNECTs over) was not ended by the answer.
      const kept = grant.ended === undefined && (!this.#live(grant) || this.#recheck(grant, verdict.rules, lease));
      this.#counts[kept ? 'renewed' : 'revoked']++;
    } else if (verdict?.kind === 'allow') {
      this.#counts.renewed++;
      if (lease !== undefined && this.#live(grant)) this.#renew(grant, lease);
    } else if (reason !== undefined) {
      this.#counts.revoked++;
      // The signals may have ended it already (an actor's state: every grant of its certificate, in every process).
      if (this.#live(grant)) this.#end(grant, reason);
    } else {
      this.#counts.failed++;
      if (grant.lease === leaseAsked) grant.failures += 1;
    }
    if (this.#live(grant)) this.#schedule(grant);
  }

  /**
   * A fresher verdict decided on the traffic: each CONNECT of the grant is checked against its `rules` (`keptBy`);
   * the others are closed (`revoked-denied`). None kept: the grant ends. Some kept: the grant goes on, renewed by
   * `lease`. Returns whether the grant goes on.
   */
  #recheck(grant: Grant, rules: readonly HostnameCandidate[], lease: Lease | undefined): boolean {
    const refused = [...grant.holds].filter((hold) => !hold.keptBy(rules));
    if (!this.#revokeHolds(grant, refused, 'revoked-denied')) return false;
    if (lease !== undefined) this.#renew(grant, lease);
    return true;
  }

  /**
   * Ends the part of `holds` alone (their tunnels closed with `reason`, their CONNECTs not yet open refused); the
   * grant ends when that leaves it none. Returns whether the grant goes on.
   */
  #revokeHolds(grant: Grant, holds: readonly Hold[], reason: 'revoked-denied'): boolean {
    if (holds.length === 0) return this.#live(grant);
    if (holds.length === grant.holds.size) {
      this.#end(grant, reason);
      return false;
    }
    for (const hold of holds) {
      hold.revoked = reason;
      grant.holds.delete(hold);
      hold.tunnel?.close(reason);
    }
    const actor = `${grant.key.actor.atespace}/${grant.key.actor.name}`;
    this.#deps.log?.debug({ destination: grant.key.destination, actor, reason, tunnels: holds.filter((h) => h.tunnel !== undefined).length }, 'egress tunnels no longer allowed for their hostname');
    return true;
  }

  /** Ends the grant: its tunnels closed with `reason`, its CONNECTs not yet open refused. Returns the tunnels closed. */
  #end(grant: Grant, reason: GrantEnd): number {
    if (grant.ended !== undefined) return 0;
    grant.ended = reason;
    this.#forget(grant);
    let closed = 0;
    for (const hold of [...grant.holds]) {
      const tunnel = hold.tunnel;
      if (tunnel === undefined) continue;
      closed += 1;
      tunnel.close(reason);
    }
    this.#deps.log?.debug({ destination: grant.key.destination, actor: `${grant.key.actor.atespace}/${grant.key.actor.name}`, reason, tunnels: closed }, 'egress grant ended');
    return closed;
  }

  #released(grant: Grant, hold: Hold): void {
    grant.holds.delete(hold);
    if (grant.holds.size === 0 && this.#grants.get(grant.id) === grant) this.#forget(grant);
  }

  #forget(grant: Grant): void {
    clearTimeout(grant.timer);
    grant.timer = undefined;
    if (this.#grants.get(grant.id) !== grant) return;
    this.#grants.delete(grant.id);
    const left = (this.#byCert.get(grant.key.certDigest) ?? 1) - 1;
    if (left <= 0) this.#byCert.delete(grant.key.certDigest);
    else this.#byCert.set(grant.key.certDigest, left);
  }
}
