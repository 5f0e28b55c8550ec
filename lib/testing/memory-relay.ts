/**
 * An in-memory stand-in for the cluster primary's relay (`lib/cluster-channel.ts`): each process gets a
 * `ProcessChannel`; what one sends (a structured clone, as IPC delivers) is queued for every other and delivered,
 * in order, when `flush()` is called, so a test decides when the processes hear each other.
 */
import type { ProcessChannel } from '../cluster-channel.js';

export interface MemoryRelay<M> {
  channel(self: number): ProcessChannel<M>;
  flush(): void;
  /** What was sent and not delivered yet. */
  readonly queue: { readonly from: number; readonly message: M }[];
}

export function memoryRelay<M>(): MemoryRelay<M> {
  const handlers = new Map<number, (m: M) => void>();
  const queue: { from: number; message: M }[] = [];
  return {
    queue,
    channel: (self) => ({
      self,
      send: (message) => void queue.push({ from: self, message: structuredClone(message) }),
      onMessage: (handler) => {
        handlers.set(self, handler);
        return () => handlers.delete(self);
      },
    }),
    flush: () => {
      while (queue.length > 0) {
        const { from, message } = queue.shift() as { from: number; message: M };
        for (const [id, handler] of handlers) if (id !== from) handler(message);
      }
    },
  };
}
