/**
 * What the open tunnels of this process hear about the verdicts that granted them, from wherever it is learned:
 * - a slow path's verdict here (a CONNECT's miss, or a grant's re-validation: `egress-decider.ts`);
 * - a verdict another process stored, adopted here (`shared-verdicts.ts`);
 * - an eviction another process made that closes tunnels (a revoke, an actor found not running or unknown);
 * - a revoke asked of this process (`POST /egress/revoke`).
 * It hands them to the grants of this process's egress listener (`grants.ts`), and makes the revocations it learns
 * here known to the other processes of a `--workers` cluster: a revoke, or an actor found not running or unknown
 * while this process holds tunnels of that certificate, evicts the matching verdicts in every process and says
 * their tunnels close (a policy's denial needs no message of its own: it is stored, and the others adopt it).
 * An actor found not running by a CONNECT of a certificate that holds no tunnel here sends nothing: a process that
 * holds some finds out at its own re-validation, within the bound.
 */
import { opensTunnels, type VerdictNews } from './egress-decider.js';
import { revocationOf } from './revocation.js';
import type { SharedVerdictHooks } from './shared-verdicts.js';
import type { CachedVerdict, EgressKey, EgressVerdict, EgressVerdictCache, EvictionCloses, Lease, VerdictFilter } from './verdict-cache.js';

/** The grants of this process (`EgressGrants`), as the signals reach them. */
export interface GrantListener {
  /**
   * A fresher verdict for `key`: an allow renews the grant with `lease`; hostname rules keep (and renew) the tunnels
   * allowed for a hostname they still match and close the others; a denial ends it.
   */
  verdict(key: EgressKey, verdict: EgressVerdict, lease: Lease | undefined): void;
  /** Ends every grant `filter` matches, for `reason`: answers how many tunnels it closed. */
  revoke(filter: VerdictFilter, reason: EvictionCloses): number;
  /** Whether a grant of this certificate is held here (a tunnel open, or a CONNECT about to open one). */
  holdsCertificate(certDigest: string): boolean;
}

/** What a revoke did in this process. */
export interface RevokeResult {
  /** Cached verdicts evicted (also in every other process, which count their own). */
  readonly evicted: number;
  /** Tunnels closed here. */
  readonly tunnelsClosed: number;
}

export class GrantSignals implements VerdictNews, SharedVerdictHooks {
  #listener: GrantListener | undefined;

  /** `cache`: the verdict table (undefined with `--egress-cache off`: nothing to evict, nothing shared). */
  constructor(private readonly cache: EgressVerdictCache | undefined) {}

  /** The grants that hear the signals from now on (one listener); returns what detaches it. */
  attach(listener: GrantListener): () => void {
    this.#listener = listener;
    return () => {
      if (this.#listener === listener) this.#listener = undefined;
    };
  }

  learned(key: EgressKey, verdict: EgressVerdict, lease: Lease | undefined): void {
    const reason = revocationOf(verdict);
    if (reason === 'revoked-not-running' || reason === 'revoked-unknown') {
      // The actor's state, not this destination's: every tunnel of this certificate, in every process.
      if (this.#listener?.holdsCertificate(key.certDigest) === true) this.revoke({ certDigest: key.certDigest }, reason);
      return;
    }
    this.#listener?.verdict(key, verdict, lease);
  }

  adopted(key: EgressKey, entry: CachedVerdict): void {
    const lease = { origin: entry.origin, generation: entry.generation, expiresAtMs: entry.expiresAtMs };
    this.#listener?.verdict(key, entry.verdict, opensTunnels(entry.verdict) ? lease : undefined);
  }

  revoked(filter: VerdictFilter, reason: EvictionCloses): void {
    this.#listener?.revoke(filter, reason);
  }

  /**
   * Revokes what `filter` matches: its cached verdicts evicted here and in every other process (the next CONNECT
   * asks again), then its tunnels closed here and, through the eviction's message, in the others.
   */
  revoke(filter: VerdictFilter, reason: EvictionCloses = 'revoked-admin'): RevokeResult {
    const evicted = this.cache?.evict(filter, reason) ?? 0;
    const tunnelsClosed = this.#listener?.revoke(filter, reason) ?? 0;
    return { evicted, tunnelsClosed };
  }
}
