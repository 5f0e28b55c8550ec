/**
 * What an upstream answer or failure means, as `UpstreamOutcome`s. The only place that knows the stale-answer
 * rule (421 **with** `x-ate-assignment-stale: true`, value case-insensitive; a bare 421 is the actor's own answer)
 * and which transport errors are connect failures and which are resets.
 */
import { STALE_HEADER, STALE_HEADER_VALUE, STALE_STATUS } from '../../lib/wire-contract.js';
import type { UpstreamOutcome } from '../api/filter.js';

export { STALE_HEADER };

/** Response headers never relayed to the client: hop-by-hop (RFC 9110 §7.6.1) and the worker's stale signal. */
const RESPONSE_DROP: ReadonlySet<string> = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  STALE_HEADER,
]);

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

/** Lengths of the names in RESPONSE_DROP: any other name is relayed without lower-casing it first. */
const DROP_LENGTHS: ReadonlySet<number> = new Set([...RESPONSE_DROP].map((n) => n.length));

/**
 * The headers to relay, as node's flat `[name, value, ...]` (latin1, so bytes pass through unchanged): hop-by-hop
 * headers, headers named by Connection, and the stale signal removed. Names keep their case.
 */
export function relayHeaders(raw: readonly Buffer[]): string[] {
  const out: string[] = [];
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const nameBuf = raw[i] as Buffer;
    const name = nameBuf.toString('latin1');
    if (DROP_LENGTHS.has(name.length)) {
      const lower = name.toLowerCase();
      if (RESPONSE_DROP.has(lower)) {
        if (lower === 'connection') connection = (raw[i + 1] as Buffer).toString('latin1');
        continue;
      }
    }
    out.push(name, (raw[i + 1] as Buffer).toString('latin1'));
  }
  if (connection !== undefined) removeNamed(out, connection);
  return out;
}

/** Removes the headers a Connection value names (beyond the hop-by-hop ones already gone). */
function removeNamed(out: string[], connection: string): void {
  const c = connection.toLowerCase();
  if (c === 'keep-alive' || c === 'close') return;
  for (const token of c.split(',')) {
    const t = token.trim();
    if (t === '' || t === 'close' || t === 'keep-alive' || t === 'content-length') continue;
    for (let i = 0; i < out.length; i += 2) {
      if ((out[i] as string).toLowerCase() === t) {
        out.splice(i, 2);
        i -= 2;
      }
    }
  }
}

/** The relayed response, with its headers as an object built only when a filter asks for them. */
export class ResponseOutcome {
  readonly kind = 'response' as const;
  #headers: Record<string, string | string[]> | undefined;
  constructor(
    readonly status: number,
    private readonly list: readonly string[],
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

export const STALE: UpstreamOutcome = Object.freeze({ kind: 'stale', status: 421 });
export const TIMEOUT: UpstreamOutcome = Object.freeze({ kind: 'timeout' });
export const CANCELLED: UpstreamOutcome = Object.freeze({ kind: 'cancelled' });

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/**
 * Classifies a failure before any response headers. `requestStarted`: undici had begun writing the request on a
 * connected socket, so the request may have reached the actor. Before that, every failure (refused, connect
 * timeout, unreachable, ...) is a connect failure: nothing was sent.
 */
export function classifyFailure(err: unknown, requestStarted: boolean): UpstreamOutcome {
  const code = errorCode(err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return TIMEOUT;
  if (!requestStarted) return { kind: 'connect-failed', code };
  return { kind: 'reset', requestWritten: true, code };
}
