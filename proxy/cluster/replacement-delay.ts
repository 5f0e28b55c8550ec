/**
 * How long the primary waits before it replaces a proxy worker that died. A worker that died once (killed, out of
 * memory) is replaced at once; a crash loop — a worker dying again and again, say on an input that still kills it —
 * is slowed down exponentially, so the primary does not spend both cores forking processes that die at start.
 */

/** Deaths within this window count as a loop. */
export const DEATH_WINDOW_MS = 10_000;
/** Deaths within the window that are still replaced at once. */
export const FREE_REPLACEMENTS = 2;
export const FIRST_DELAY_MS = 250;
export const MAX_DELAY_MS = 5_000;

/** The wait before the next replacement, given when workers died (`deaths`, oldest first, this death included). */
export function replacementDelayMs(deaths: readonly number[], now: number): number {
  const recent = deaths.filter((t) => now - t < DEATH_WINDOW_MS).length;
  if (recent <= FREE_REPLACEMENTS) return 0;
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (recent - FREE_REPLACEMENTS - 1));
}
