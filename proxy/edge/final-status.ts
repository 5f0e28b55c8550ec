/**
 * The status a finished request is counted and logged with, and the error its filters' `onDone` sees: the
 * status sent (an error when the response was cut off), or the catalog's answer when nothing was sent.
 */
import type { ProxyRequest } from '../request/context.js';
import { ERRORS } from '../chain/errors.js';

export function finalStatus(ctx: ProxyRequest): { readonly status: number; readonly error: Error | undefined } {
  const res = ctx.res;
  if (res.headersSent) {
    if (res.writableFinished) return { status: res.statusCode, error: undefined };
    ctx.responseState = 'truncated';
    return { status: res.statusCode, error: new Error(ctx.details ?? 'response not completed: the client went away') };
  }
  return { status: ctx.error?.status ?? ERRORS.DOWNSTREAM_CLOSED.status, error: new Error(ctx.details ?? ERRORS.DOWNSTREAM_CLOSED.text) };
}
