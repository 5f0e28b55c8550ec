/**
 * The access log: its own stream, apart from the component log and independent of `LOG_LEVEL` — one JSON line per
 * finished request, upgrade and tunnel (the line built by `access-log-line.ts`, written by the one place every
 * request finishes, `edge/lifecycle.ts`) and one per admin call that changes state (`admin/server.ts`). `--access-log`:
 * `stdout` (`on`), `off`, or a file path (appended to, created with its folders; `reopen()` — on SIGUSR1 —
 * opens the path again, after a log rotation moved the file away).
 *
 * Lines go out asynchronously in writes of whole lines of at most 4096 bytes (PIPE_BUF): with `--workers N`
 * every process writes its own lines to the same stdout or the same file (opened O_APPEND), and a line is never
 * split by another process's (only a single line longer than 4096 bytes could be).
 */
import { pino } from 'pino';
import type { AdminCall } from '../../lib/ops-routes.js';

/** Where the access log goes. */
export type AccessLogTarget = { readonly kind: 'off' } | { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string };

/** What lines are written to: a pino destination (SonicBoom), or a test's collector. */
export interface AccessLogSink {
  write(line: string): unknown;
  reopen?(): void;
  flushSync?(): void;
  end?(): void;
}

/** Every write(2) carries whole lines and at most this many bytes (Linux PIPE_BUF: atomic on a pipe). */
const MAX_WRITE_BYTES = 4096;

/** `--access-log` as given: `stdout` / `on`, `off`, or a path. */
export function accessLogTarget(value: string): AccessLogTarget {
  const v = value.trim();
  if (v === 'off') return { kind: 'off' };
  if (v === 'stdout' || v === 'on' || v === '') return { kind: 'stdout' };
  return { kind: 'file', path: v };
}

function openSink(target: AccessLogTarget): AccessLogSink | undefined {
  switch (target.kind) {
    case 'off':
      return undefined;
    case 'stdout':
      return pino.destination({ dest: 1, sync: false, maxWrite: MAX_WRITE_BYTES });
    case 'file':
      return pino.destination({ dest: target.path, sync: false, append: true, mkdir: true, maxWrite: MAX_WRITE_BYTES });
  }
}

export class AccessLog {
  readonly enabled: boolean;
  readonly #sink: AccessLogSink | undefined;
  readonly #file: boolean;

  /** `sink` replaces the target's own destination (tests collect the lines). */
  constructor(target: AccessLogTarget, sink?: AccessLogSink) {
    this.#file = target.kind === 'file';
    this.#sink = target.kind === 'off' ? undefined : (sink ?? openSink(target));
    this.enabled = this.#sink !== undefined;
  }

  /** One line (`fields` in their documented order). */
  write(fields: Readonly<Record<string, unknown>>): void {
    this.#sink?.write(`${JSON.stringify(fields)}\n`);
  }

  /** Opens a file target again (log rotation); nothing for stdout. */
  reopen(): void {
    if (this.#file) this.#sink?.reopen?.();
  }

  /** Writes out what is buffered (at shutdown). */
  close(): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    try {
      sink.flushSync?.();
    } catch {
      // A destination not open yet (or already gone) has nothing to flush.
    }
  }
}

/** The access-log line of a state-changing admin call (`msg: "admin"`), fields in this order. */
export function adminCallLine(call: AdminCall): Record<string, unknown> {
  return {
    msg: 'admin',
    time: new Date().toISOString(),
    pid: process.pid,
    client: call.client,
    method: call.method,
    path: call.url,
    status: call.status,
    durationMs: call.durationMs,
    refused: call.status === 401 || call.status === 403,
  };
}

/** Where an admin server sends its state-changing calls: the access log when it is on. */
export function auditToAccessLog(accessLog: AccessLog | undefined): ((call: AdminCall) => void) | undefined {
  if (accessLog === undefined || !accessLog.enabled) return undefined;
  return (call) => accessLog.write(adminCallLine(call));
}
