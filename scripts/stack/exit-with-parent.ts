/**
 * Preloaded (`node --import`) into every component that `npm start` launches. The launcher holds the write end
 * of each component's stdin; when the launcher goes away for any reason, even SIGKILL, that pipe closes and the
 * component shuts down exactly as on SIGTERM. So a stack never leaves orphans behind.
 *
 * Once the launcher is gone, the component's stdout and stderr lead nowhere: writes to them are discarded (a
 * logger that retries a write to a closed pipe could otherwise spin forever while exiting), and a watchdog thread,
 * which runs even if the main thread is stuck, kills the process if the graceful stop takes too long.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How long a component may take to stop after its launcher is gone. */
const WATCHDOG_MS = 30_000;

type WriteSync = (fd: number, data: unknown, ...rest: unknown[]) => number;
type Write = (fd: number, data: unknown, ...rest: unknown[]) => void;

function byteLength(data: unknown, rest: unknown[]): number {
  if (typeof data === 'string') return Buffer.byteLength(data, typeof rest[1] === 'string' ? (rest[1] as BufferEncoding) : 'utf8');
  if (ArrayBuffer.isView(data)) {
    const offset = typeof rest[0] === 'number' ? rest[0] : 0;
    return typeof rest[1] === 'number' ? rest[1] : data.byteLength - offset;
  }
  return 0;
}

/** Makes every write to fd 1 and 2 succeed without writing. */
function discardStdio(): void {
  const mutable = fs as unknown as { writeSync: WriteSync; write: Write };
  const writeSync = mutable.writeSync;
  const write = mutable.write;
  mutable.writeSync = (fd, data, ...rest) => (fd === 1 || fd === 2 ? byteLength(data, rest) : writeSync(fd, data, ...rest));
  mutable.write = (fd, data, ...rest) => {
    if (fd !== 1 && fd !== 2) return write(fd, data, ...rest);
    const last = rest[rest.length - 1];
    const callback = typeof last === 'function' ? (last as (err: null, n: number, d: unknown) => void) : undefined;
    const n = byteLength(data, rest);
    if (callback) process.nextTick(() => callback(null, n, data));
  };
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}

function startWatchdog(): void {
  const code = `setTimeout(() => process.kill(${process.pid}, 'SIGKILL'), ${WATCHDOG_MS});`;
  new Worker(code, { eval: true }).unref();
}

const stdin = process.stdin;
if (!stdin.isTTY) {
  let gone = false;
  const leave = (): void => {
    if (gone) return;
    gone = true;
    discardStdio();
    startWatchdog();
    process.kill(process.pid, 'SIGTERM');
  };
  stdin.once('end', leave);
  stdin.once('error', leave);
  stdin.on('data', () => {
    /* the launcher never writes; discard */
  });
  stdin.resume();
  // Watching stdin must not keep a component alive that would otherwise exit.
  (stdin as unknown as { unref?: () => void }).unref?.();
}
export {};
