/**
 * What an upstream answer or failure means, as `UpstreamOutcome`s. The only place that knows the stale-answer
 * rule (421 **with** `x-ate-assignment-stale: true`, value case-insensitive; a bare 421 is the actor's own answer)
 * and which transport errors are connect failures and which are resets. Which response headers are relayed is
 * `http/relayed-headers.ts`.
 */
import { STALE_HEADER, STALE_HEADER_VALUE, STALE_STATUS } from '../../lib/wire-contract.js';
import type { UpstreamOutcome } from '../api/filter.js';
import { UpstreamIdentityError } from './tls.js';

/** True for a stale rejection, given undici's raw response headers. */
export function isStaleRejection(status: number, raw: readonly Buffer[]): boolean {
  if (status !== STALE_STATUS) return false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as Buffer;
    if (name.length !== STALE_HEADER.length || name.toString('latin1').toLowerCase() !== STALE_HEADER) continue;
    if ((raw[i + 1] as Buffer).toString('latin1').trim().toLowerCase() === STALE_HEADER_VALUE) return true;
  }
  return false;
}

/** The relayed response, with its headers as an object built only when a filter asks for them. */
export class ResponseOutcome {
  readonly kind = 'response' as const;
  #headers: Record<string, string | string[]> | undefined;
  constructor(
    readonly status: number,
    /** The headers as relayed: node's flat `[name, value, ...]` list. */
    readonly list: readonly string[],
  ) {}
  get headers(): Readonly<Record<string, string | string[]>> {
    if (this.#headers === undefined) {
      const h: Record<string, string | string[]> = {};
      for (let i = 0; i < this.list.length; i += 2) {
        const k = (this.list[i] as string).toLowerCase();
        const v = this.list[i + 1] as string;
        const prev = h[k];
        h[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
      }
      this.#headers = h;
    }
    return this.#headers;
  }
}

/** Every outcome but an answer: what an attempt ends with when no response headers came. */
export type UpstreamFailure = Exclude<UpstreamOutcome, { readonly kind: 'response' }>;

export const STALE: UpstreamFailure = Object.freeze({ kind: 'stale', status: 421 });
export const TIMEOUT: UpstreamFailure = Object.freeze({ kind: 'timeout' });
export const CANCELLED: UpstreamFailure = Object.freeze({ kind: 'cancelled' });
/** The code of a request failed without connecting because its worker's address was down (`outliers.ts`). */
export const EJECTED_CODE = 'UPSTREAM_EJECTED';
/** A request failed at once, never sent: its worker's address is down. A connect failure for the re-run rule. */
export const EJECTED: UpstreamFailure = Object.freeze({ kind: 'connect-failed', code: EJECTED_CODE, ejected: true });

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/**
 * undici's codes for a request it refuses to build (invalid path, method or header; an unsupported header such as
 * Expect): the request's fault, raised before any connection is used.
 */
const REQUEST_REFUSED: ReadonlySet<string> = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/**
 * Classifies a failure before any response headers. `requestStarted`: undici had a connected socket and began
 * writing the request; before that, a worker whose certificate failed verification is `identity-rejected`, a
 * request undici refused to build is `invalid-request` (a local error: the worker was never involved) and every
 * other failure (refused, connect timeout, unreachable, ...) is a connect
 * failure: nothing was sent. `requestWritten`: undici reported the whole request (headers and body) written, so
 * the actor may have received and processed it; a reset before that cut the request short.
 */
export function classifyFailure(err: unknown, requestStarted: boolean, requestWritten: boolean): UpstreamFailure {
  if (err instanceof UpstreamIdentityError) return { kind: 'identity-rejected', presented: err.presented, reason: err.reason };
  const code = errorCode(err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return TIMEOUT;
  if (!requestStarted) return REQUEST_REFUSED.has(code) ? { kind: 'invalid-request', code } : { kind: 'connect-failed', code };
  return { kind: 'reset', requestWritten, code };
}
