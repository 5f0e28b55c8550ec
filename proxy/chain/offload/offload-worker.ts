/**
 * The filter worker pool's thread (piscina's worker file): each task names the filter module it belongs to by the
 * URL the proxy loaded it from (a reload's URL is new, so the new code is imported) and carries its input; the
 * thread imports the module once per URL and returns what its `offload` export decides. A throw rejects the task.
 */
import { offloadExportOf } from './offload-export.js';
import type { OffloadDecision, OffloadFunction } from '../../api/offload.js';

/** What the pool sends: the module's URL and the input its main-loop part prepared. */
export interface OffloadTask {
  readonly url: string;
  readonly input: unknown;
}

const functions = new Map<string, Promise<OffloadFunction>>();

async function load(url: string): Promise<OffloadFunction> {
  const fn = offloadExportOf((await import(url)) as Record<string, unknown>);
  if (fn === undefined) throw new TypeError(`filter module ${url} has no "offload" export`);
  return fn;
}

export default async function runOffloaded(task: OffloadTask): Promise<OffloadDecision> {
  let fn = functions.get(task.url);
  if (fn === undefined) {
    fn = load(task.url);
    functions.set(task.url, fn);
    fn.catch(() => functions.delete(task.url)); // a failed import is tried again by the next task
  }
  return (await fn)(task.input);
}
