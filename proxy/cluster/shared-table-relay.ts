/**
 * The primary's half of the tables the proxy workers share: the actor bindings
 * (proxy/stages/actor-cache/shared-bindings.ts) and the egress verdicts (proxy/egress/shared-verdicts.ts). Every
 * message of theirs a worker sends is passed on, unchanged and in arrival order, to every other connected worker:
 * one relay, one order, for both tables.
 */
import cluster, { type Worker } from 'node:cluster';
import { isBindingMessage, type BindingMessage } from '../stages/actor-cache/shared-bindings.js';
import { isEgressVerdictMessage, type EgressVerdictMessage } from '../egress/shared-verdicts.js';

/** Whether `message` belongs to a shared table (and is relayed). */
export function isSharedTableMessage(message: unknown): message is BindingMessage | EgressVerdictMessage {
  return isBindingMessage(message) || isEgressVerdictMessage(message);
}

/** Starts relaying; returns the undo. */
export function relaySharedTables(): () => void {
  const relay = (from: Worker, message: unknown): void => {
    if (!isSharedTableMessage(message)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && worker !== from && worker.isConnected()) worker.send(message);
    }
  };
  cluster.on('message', relay);
  return () => void cluster.off('message', relay);
}
