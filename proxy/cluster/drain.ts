/**
 * Draining the workers, in two steps. First every worker stops accepting; once all confirmed, the shared listener
 * is closed (node:cluster closes it when its last worker leaves it, and each confirmation follows that worker's
 * leaving on the same IPC channel). Only then are they told to drain: a client that a draining worker answers with
 * `Connection: close` and that reconnects is refused, instead of being accepted by the primary and handed to a
 * worker that no longer takes connections (node:cluster closes such a connection after the client wrote to it).
 * Any worker still running after the grace period is killed.
 */
import type { Worker } from 'node:cluster';
import { ACCEPTING_STOPPED, DRAIN, STOP_ACCEPTING } from './messages.js';

/** How long the primary waits for the workers to confirm they stopped accepting before draining them anyway. */
const STOP_ACCEPTING_WAIT_MS = 2000;

/** Stops every worker accepting, then sends DRAIN and waits for `allExited`; SIGKILLs whoever is left after `graceMs`. */
export async function drainWorkers(workers: readonly Worker[], allExited: Promise<void>, graceMs: number): Promise<void> {
  const grace = setTimeout(() => {
    for (const worker of workers) worker.process.kill('SIGKILL');
  }, graceMs);
  await stopAccepting(workers, Math.min(graceMs, STOP_ACCEPTING_WAIT_MS));
  for (const worker of workers) if (worker.isConnected()) worker.send({ type: DRAIN });
  await allExited;
  clearTimeout(grace);
}

/** Resolves once every worker confirmed (or exited), or after `waitMs`. */
function stopAccepting(workers: readonly Worker[], waitMs: number): Promise<void> {
  return new Promise((resolve) => {
    let left = workers.length;
    const cleanups: (() => void)[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      for (const cleanup of cleanups) cleanup();
      resolve();
    };
    const timer = setTimeout(finish, waitMs);
    for (const worker of workers) {
      let counted = false;
      const settle = (): void => {
        if (counted) return;
        counted = true;
        if (--left === 0) finish();
      };
      const onMessage = (m: { type?: string } | undefined): void => {
        if (m?.type === ACCEPTING_STOPPED) settle();
      };
      worker.on('message', onMessage);
      worker.once('exit', settle);
      cleanups.push(() => {
        worker.off('message', onMessage);
        worker.off('exit', settle);
      });
      if (worker.isConnected()) worker.send({ type: STOP_ACCEPTING });
      else settle();
    }
    if (left === 0) finish();
  });
}
