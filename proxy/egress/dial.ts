/**
 * Dials an allowed CONNECT's destination: a TCP connection (half-open, no Nagle) within the connect timeout, given
 * up when the actor goes away first. Never throws.
 */
import net, { type Socket } from 'node:net';
import type { DepartureWatch } from './departure.js';

export type DialResult =
  | { readonly kind: 'connected'; readonly socket: Socket }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'cancelled' };

export function dial(to: { readonly ip: string; readonly port: number }, timeoutMs: number, gone: Pick<DepartureWatch, 'left' | 'onLeave'>): Promise<DialResult> {
  return new Promise((resolve) => {
    if (gone.left) return resolve({ kind: 'cancelled' });
    const socket = net.connect({ host: to.ip, port: to.port, allowHalfOpen: true, noDelay: true });
    let settled = false;
    const settle = (result: DialResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopWaiting();
      if (result.kind !== 'connected') socket.destroy();
      resolve(result);
    };
    // Stays attached: once connected, a later error is the tunnel's to handle (settle does nothing then).
    const onError = (err: NodeJS.ErrnoException): void => settle({ kind: 'failed', reason: err.code ?? err.message });
    const timer = setTimeout(() => settle({ kind: 'failed', reason: `no connection within ${timeoutMs} ms` }), timeoutMs);
    const stopWaiting = gone.onLeave(() => settle({ kind: 'cancelled' }));
    socket.on('error', onError);
    socket.once('connect', () => settle({ kind: 'connected', socket }));
  });
}
