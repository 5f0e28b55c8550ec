/**
 * An exchange's `onClose` listeners, held only until its `'close'`. node keeps a finished response reachable for a
 * while after it closed, and a listener left registered on it would keep the whole request (its context, headers
 * and upstream attempt) reachable too: long enough to outlive young-generation collections and be promoted, which
 * multiplied the garbage collector's work per request. So the listeners are dropped as they are called, and one
 * shared function is registered per exchange instead of a `once` wrapper per listener. Each listener is called with
 * the exchange, so the edge registers shared functions rather than a closure per request.
 */
import type { EventEmitter } from 'node:events';

export interface ClosingExchange<E> extends EventEmitter {
  /** The listeners not yet called (undefined: none registered, or `'close'` was emitted). */
  closeListeners: ((exchange: E) => void)[] | undefined;
}

function emitClosed(this: ClosingExchange<unknown>): void {
  const listeners = this.closeListeners;
  if (listeners === undefined) return;
  this.closeListeners = undefined;
  for (const listener of listeners) listener(this);
}

/**
 * Calls `listener` once, with `exchange`, when `exchange` emits `'close'` — or `alsoOn` does, first: another object
 * whose close is the exchange's end too (an HTTP/2 stream, whose compatibility response does not always report it).
 */
export function addCloseListener<E>(exchange: E & ClosingExchange<E>, listener: (exchange: E) => void, alsoOn?: EventEmitter): void {
  const listeners = exchange.closeListeners;
  if (listeners !== undefined) {
    listeners.push(listener);
    return;
  }
  exchange.closeListeners = [listener];
  exchange.on('close', emitClosed);
  alsoOn?.once('close', () => emitClosed.call(exchange as ClosingExchange<unknown>));
}
