/**
 * How a finished request ended, as counted and logged and as its filters' `onDone` sees it — a pure reading of
 * the exchange and the request, changing neither: the status sent (with an error when the response was cut off),
 * a tunnel's status (a tunnel that ran is not an error however it closed: its close reason is logged), or the
 * catalog's answer when nothing was sent (499 when the client left first).
 */
import type { ProxyRequest } from '../request/context.js';
import { ERRORS } from '../http/errors.js';

export interface FinalStatus {
  readonly status: number;
  readonly error: Error | undefined;
  /** The response started and was cut off. */
  readonly truncated: boolean;
}

export function finalStatus(ctx: Pick<ProxyRequest, 'exchange' | 'tunnel' | 'error' | 'details'>): FinalStatus {
  const exchange = ctx.exchange;
  if (ctx.tunnel !== undefined) return { status: exchange.sentStatus, error: undefined, truncated: false };
  if (exchange.headSent) {
    if (exchange.complete) return { status: exchange.sentStatus, error: undefined, truncated: false };
    return { status: exchange.sentStatus, error: new Error(ctx.details ?? 'response not completed: the client went away'), truncated: true };
  }
  return { status: ctx.error?.status ?? ERRORS.DOWNSTREAM_CLOSED.status, error: new Error(ctx.details ?? ERRORS.DOWNSTREAM_CLOSED.text), truncated: false };
}
