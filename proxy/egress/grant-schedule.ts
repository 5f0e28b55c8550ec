/**
 * When a grant (the tunnels one lease opened, `grants.ts`) acts next: re-validate its lease through ext_proc, or
 * end at the lease's expiry. Pure: the clock and the lease are given.
 *
 * - A lease this process stored is re-validated at `REVALIDATE_AT` (80 %) of the TTL; a lease adopted from another
 *   process at `REVALIDATE_AT_ADOPTED` (90 %): the process that stored it renews it first (its renewal is adopted
 *   here and moves the schedule), so a key is asked once per TTL in a cluster, not once per process.
 * - A lease that could not be renewed (the control plane or ext_proc unavailable) is tried again `RETRY_AFTER` of
 *   the TTL later while that is before its expiry; then the grant ends at the expiry (`revalidation-failed`).
 * - A grant whose first attempt is already due (a lease nearly spent when its tunnel opened) re-validates now: a
 *   lease never ends as failed without one attempt.
 * - A lease that reaches the certificate's NotAfter cannot be renewed past it: no re-validation, the grant ends at the
 *   NotAfter (`certificate-expired`).
 */
import { LOCAL_ORIGIN, type Lease } from './verdict-cache.js';

export const REVALIDATE_AT = 0.8;
export const REVALIDATE_AT_ADOPTED = 0.9;
export const RETRY_AFTER = 0.1;

export type GrantStep =
  | { readonly kind: 'revalidate'; readonly atMs: number }
  | { readonly kind: 'expire'; readonly atMs: number; readonly reason: 'certificate-expired' | 'revalidation-failed' };

/** The next step of a grant holding `lease` at `nowMs`, after `failures` failed re-validations of that lease. */
export function nextGrantStep(lease: Lease, ttlMs: number, certNotAfterMs: number, nowMs: number, failures: number): GrantStep {
  if (lease.expiresAtMs >= certNotAfterMs || nowMs >= certNotAfterMs) return { kind: 'expire', atMs: certNotAfterMs, reason: 'certificate-expired' };
  if (failures === 0) {
    const stored = lease.expiresAtMs - ttlMs;
    const at = stored + (lease.origin === LOCAL_ORIGIN ? REVALIDATE_AT : REVALIDATE_AT_ADOPTED) * ttlMs;
    return { kind: 'revalidate', atMs: Math.max(at, nowMs) };
  }
  const retry = nowMs + RETRY_AFTER * ttlMs;
  return retry < lease.expiresAtMs ? { kind: 'revalidate', atMs: retry } : { kind: 'expire', atMs: Math.max(lease.expiresAtMs, nowMs), reason: 'revalidation-failed' };
}
