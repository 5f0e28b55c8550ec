/** Draining the workers: each is asked to drain; any still running after the grace period is killed. */
import type { Worker } from 'node:cluster';
import { DRAIN } from './messages.js';

/** Sends DRAIN to every worker and waits for `allExited`; SIGKILLs whoever is left after `graceMs`. */
export async function drainWorkers(workers: readonly Worker[], allExited: Promise<void>, graceMs: number): Promise<void> {
  for (const worker of workers) worker.send({ type: DRAIN });
  const grace = setTimeout(() => {
    for (const worker of workers) worker.process.kill('SIGKILL');
  }, graceMs);
  await allExited;
  clearTimeout(grace);
}
