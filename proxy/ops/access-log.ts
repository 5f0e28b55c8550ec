/**
 * The access log: one JSON line per finished request, upgrade and tunnel (`msg: "access"`), written by the one
 * place every request finishes (`edge/lifecycle.ts`) with the fields it gathered. Off with `--access-log off`.
 */
import type { Logger } from 'pino';

export class AccessLog {
  constructor(
    private readonly log: Logger,
    readonly enabled: boolean,
  ) {}

  write(fields: Record<string, unknown>): void {
    if (this.enabled) this.log.info(fields, 'access');
  }
}
