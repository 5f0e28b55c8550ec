/**
 * Why a grant ends before its tunnels do (issue: grants that end): every tunnel an ended grant holds is closed with
 * one of these reasons, counted by it, and its access-log line says so (`closedBy`).
 * - `revoked-denied`: a fresher verdict for the grant's key (its re-validation, a CONNECT's miss, or another
 *   process's) says the policy no longer allows the destination, or allows it only for hostnames the tunnel was not
 *   allowed for (`grants.ts` checks a tunnel decided on its traffic against the fresh rules; one allowed outright was
 *   never read for a hostname);
 * - `revoked-not-running`, `revoked-unknown`: a fresher verdict says the actor is not running, or is unknown;
 * - `certificate-expired`: the certificate that opened the tunnels reached its NotAfter;
 * - `revoked-admin`: an operator revoked the actor's (or the certificate's) egress (`POST /egress/revoke`);
 * - `revalidation-failed`: the grant's lease ran out and no re-validation could renew it (the control plane, or
 *   ext_proc, unavailable): fail closed, as a CONNECT asked then would be.
 */
import type { EgressVerdict } from './verdict-cache.js';

export type EgressRevocation = 'revoked-denied' | 'revoked-not-running' | 'revoked-unknown' | 'certificate-expired' | 'revoked-admin' | 'revalidation-failed';
export const EGRESS_REVOCATIONS: readonly EgressRevocation[] = Object.freeze([
  'revoked-denied',
  'revoked-not-running',
  'revoked-unknown',
  'certificate-expired',
  'revoked-admin',
  'revalidation-failed',
]);

/** The revocation a verdict means for the tunnels of its key (undefined: an allow, or an answer that decides nothing). */
export function revocationOf(verdict: EgressVerdict): 'revoked-denied' | 'revoked-not-running' | 'revoked-unknown' | undefined {
  if (verdict.kind === 'allow') return undefined;
  // The destination is no longer allowed outright, only for some hostnames: a tunnel granted outright was never
  // read for one, so it is closed (the actor's next CONNECT is decided on its traffic); a tunnel allowed for a
  // hostname is closed for this reason only when the rules no longer match it (`grants.ts`).
  if (verdict.kind === 'hostnames') return 'revoked-denied';
  switch (verdict.outcome) {
    case 'denied':
      return 'revoked-denied';
    case 'not_running':
      return 'revoked-not-running';
    case 'unknown_actor':
      return 'revoked-unknown';
    default:
      return undefined;
  }
}

/** How a CONNECT whose grant ended while its destination was dialled is answered instead of its tunnel. */
export interface RevokedAnswer {
  readonly status: number;
  readonly body: string;
  readonly outcome: 'denied' | 'not_running' | 'unknown_actor' | 'invalid_certificate' | 'unavailable';
}

const ANSWERS: Readonly<Record<EgressRevocation, RevokedAnswer>> = Object.freeze({
  'revoked-denied': { status: 403, body: 'egress denied', outcome: 'denied' },
  'revoked-admin': { status: 403, body: 'egress denied', outcome: 'denied' },
  'revoked-not-running': { status: 403, body: 'actor is not running', outcome: 'not_running' },
  'revoked-unknown': { status: 403, body: 'unknown actor', outcome: 'unknown_actor' },
  'certificate-expired': { status: 403, body: 'invalid actor certificate', outcome: 'invalid_certificate' },
  'revalidation-failed': { status: 503, body: 'control plane unavailable', outcome: 'unavailable' },
});

export function revokedAnswerOf(reason: EgressRevocation): RevokedAnswer {
  return ANSWERS[reason];
}
