/**
 * The primary's half of the shared binding table (proxy/stages/actor-cache/shared-bindings.ts): every binding
 * event a worker sends is passed on, unchanged and in arrival order, to every other connected worker.
 */
import cluster, { type Worker } from 'node:cluster';
import { isBindingMessage } from '../stages/actor-cache/shared-bindings.js';

/** Starts relaying; returns the undo. */
export function relayBindings(): () => void {
  const relay = (from: Worker, message: unknown): void => {
    if (!isBindingMessage(message)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && worker !== from && worker.isConnected()) worker.send(message);
    }
  };
  cluster.on('message', relay);
  return () => void cluster.off('message', relay);
}
