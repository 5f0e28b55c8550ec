/**
 * A logger whose JSON lines are kept in memory: the components a test starts in its own process (the public test
 * kit's stack, the repository's own harness) log here, so a test can read them and its output stays quiet.
 */
import { pino, type Logger } from 'pino';

/** A pino logger (at `LOG_LEVEL`, default info) whose JSON lines are kept in `lines`. */
export function collectingLogger(component: string): { readonly log: Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: process.env.LOG_LEVEL ?? 'info', base: { component, pid: process.pid } },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, lines };
}
