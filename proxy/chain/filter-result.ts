/**
 * What a filter's `onRequest` may answer: `CONTINUE` or `reply(...)` (`api/filter.ts`). Anything else — a value
 * outside the declared type, such as `undefined` or `42`, or a reply without a status — is that filter failing
 * (500 `PROXY_ERR_FILTER_FAILED`, logged with its name), never taken as "continue".
 */
import type { FilterResult } from '../api/filter.js';

/** Why `result` is not a filter result, or undefined when it is one. */
export function filterResultProblem(result: unknown): string | undefined {
  if (result === null || typeof result !== 'object') return `returned ${describe(result)}, not CONTINUE or reply(...)`;
  const kind = (result as Partial<FilterResult>).kind;
  if (kind === 'continue') return undefined;
  if (kind !== 'reply') return `returned an object whose kind is ${describe(kind)}, not CONTINUE or reply(...)`;
  const reply = (result as { reply?: { status?: unknown } }).reply;
  if (reply === null || typeof reply !== 'object' || typeof reply.status !== 'number') return 'returned a reply without a numeric status';
  return undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return value === null ? 'null' : 'an object';
  return String(value);
}
