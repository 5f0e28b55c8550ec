/** pino JSON logs on stdout, one logger per component; level from LOG_LEVEL (default info). */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(component: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { component, pid: process.pid } });
}

/**
 * The one log line every component writes once all its listeners are bound. Tests and `npm start` read the
 * actual addresses from it (ports may be chosen by the OS), so its shape is a contract: msg "ready",
 * `addresses` a map of listener name → host:port.
 */
export function logReady(log: Logger, addresses: Record<string, string>): void {
  log.info({ addresses }, 'ready');
}

/** Logs the deprecated names a configuration used (each message names the replacement), once at start. */
export function logConfigWarnings(log: Logger, warnings: readonly string[]): void {
  for (const warning of warnings) log.warn({ deprecated: true }, warning);
}

/** A logger on stderr (for commands whose stdout is their answer, e.g. `actor-edge validate`). */
export function createStderrLogger(component: string, level = 'warn'): Logger {
  return pino({ level, base: { component, pid: process.pid } }, pino.destination(2));
}
