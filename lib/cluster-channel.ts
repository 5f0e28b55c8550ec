/**
 * How one node:cluster worker reaches the other workers with one kind of message: the worker sends it to the
 * primary over IPC, the primary passes it on to every other worker, and each worker hears the ones it accepts.
 * Shared tables (the proxy's actor bindings, its egress verdicts) are kept in step this way, each with its own
 * message type on the one IPC channel.
 */
import cluster from 'node:cluster';

/** A process's own id (> 0), a send to the others, and a subscription to theirs (returns its undo). */
export interface ProcessChannel<M> {
  readonly self: number;
  send(message: M): void;
  onMessage(handler: (message: M) => void): () => void;
}

/** Messages whose `type` is `type`. */
export function hasMessageType(m: unknown, type: string): boolean {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;
}

/**
 * The node:cluster channel of this worker for the messages `accepts` recognises (undefined in a process that is not a
 * cluster worker). Sends are dropped once the primary is gone.
 */
export function clusterWorkerChannel<M>(accepts: (m: unknown) => m is M): ProcessChannel<M> | undefined {
  const worker = cluster.isWorker ? cluster.worker : undefined;
  if (worker === undefined || process.send === undefined) return undefined;
  return {
    self: worker.id,
    send: (message) => {
      if (process.connected) process.send?.(message);
    },
    onMessage: (handler) => {
      const listener = (m: unknown): void => {
        if (accepts(m)) handler(m);
      };
      process.on('message', listener);
      return () => process.off('message', listener);
    },
  };
}
