/**
 * `--filter-timeout-ms`: a user filter's promise (from `onRequest` or `onResponse`) that has not settled in time
 * fails its own request with 504 `PROXY_ERR_FILTER_TIMEOUT` (logged with the filter's name); the request's abort
 * signal fires so the filter can stop its work. Built-in stages are not bounded here: ext_proc has its own
 * per-message timeout. Only a filter that returns a promise pays for the timer.
 */
import type { ProxyRequest } from '../request/context.js';
import { ERRORS, ProxyError } from '../http/errors.js';

export const DEFAULT_FILTER_TIMEOUT_MS = 10_000;

/** `pending`, or a rejection with `ProxyError(FILTER_TIMEOUT)` once `timeoutMs` passed first. */
export function withFilterTimeout<T>(ctx: ProxyRequest, filter: string, phase: string, pending: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      ctx.log.warn({ filter, phase, timeoutMs }, 'filter timed out');
      ctx.abortFilters(`filter ${filter} timed out`);
      reject(new ProxyError(ERRORS.FILTER_TIMEOUT, `${phase} did not settle within ${timeoutMs} ms`));
    }, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
