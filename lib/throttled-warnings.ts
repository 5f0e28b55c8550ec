/**
 * Warnings that can arrive in floods (a scanner knocking on a TLS port, a peer with the wrong identity retrying):
 * at most one log line per kind per interval, the next one saying how many were held back.
 */
import type { Logger } from 'pino';

export class ThrottledWarnings {
  readonly #last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = 1000,
  ) {}

  warn(kind: string, fields: Record<string, unknown>, msg: string): void {
    const now = Date.now();
    const seen = this.#last.get(kind);
    if (seen !== undefined && now - seen.at < this.intervalMs) {
      seen.held++;
      return;
    }
    this.#last.set(kind, { at: now, held: 0 });
    this.log.warn({ ...fields, ...(seen !== undefined && seen.held > 0 ? { notLogged: seen.held } : {}) }, msg);
  }
}
