/**
 * Preloaded (`node --import`) into every process that lib/launch.ts starts, and inherited by the node:cluster
 * workers such a process forks. The launcher holds the write end of the process's stdin and never writes to it;
 * when the launcher goes away for any reason, even SIGKILL, the kernel closes that pipe, stdin ends, and:
 *
 * - the launched process stops exactly as on SIGTERM (its cluster workers are stopped by it, as on SIGTERM);
 * - its output leads nowhere from then on: write errors are ignored, and the process ends without the logger's
 *   exit flush, which would retry a write to the closed pipe forever;
 * - a watchdog thread, which runs even if the main thread is stuck, kills it if the stop takes too long.
 *
 * So nothing outlives its launcher. Worker threads load the preload too (they inherit `--import`), but a thread's
 * `process.stdin` is not the launcher's pipe and ends at once: there the preload does nothing (the filter worker
 * pool's threads would otherwise stop the process as they start).
 */
import cluster from 'node:cluster';
import { isMainThread, Worker } from 'node:worker_threads';

/** How long a process may take to stop after its launcher is gone. */
const STOP_DEADLINE_MS = 30_000;

function whenLauncherGone(then: () => void): void {
  const stdin = process.stdin;
  stdin.once('end', then);
  stdin.once('error', then);
  stdin.resume(); // the launcher never writes: this only waits for the end
  // Watching stdin must not keep alive a process that would otherwise exit.
  (stdin as { unref?: () => void }).unref?.();
}

function endWithoutOutput(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  process.prependListener('exit', () => process.kill(process.pid, 'SIGKILL'));
}

function stopWithoutLauncher(): void {
  endWithoutOutput();
  new Worker(`setTimeout(() => process.kill(${process.pid}, 'SIGKILL'), ${STOP_DEADLINE_MS});`, { eval: true }).unref();
  process.kill(process.pid, 'SIGTERM');
}

if (isMainThread) whenLauncherGone(cluster.isWorker ? endWithoutOutput : stopWithoutLauncher);
export {};
