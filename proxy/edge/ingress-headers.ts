/**
 * Ingress header sanitisation, done once per client request before any filter runs:
 * - hop-by-hop headers (`hop-by-hop.ts`: the RFC 9110 list, Connection and every header it names) are removed,
 *   and so is `Expect` (the ingress answers `100 Continue` itself, and ignores any other expectation:
 *   `http1-engine.ts`, `h2-engine.ts`); a Connection header cannot name away the
 *   headers the proxy itself relies on or adds (`REQUEST_KEEP`);
 * - internal headers a client could forge to steer routing (`x-ate-target-port`, `ate-target-actor`, ...,
 *   plus `--strip-headers`) are removed;
 * - forwarding headers follow `trustedHops` (`--xff-trusted-hops`, Envoy's `xff_num_trusted_hops`):
 *   `x-forwarded-for` always gets the peer address appended (as Envoy with `use_remote_address`); with 0 trusted
 *   hops `x-forwarded-proto` is set from the connection and `forwarded`, `x-forwarded-host` and `x-real-ip` are
 *   removed (the peer is the client, and a client's claims are not passed on); with N > 0 the peer is a trusted
 *   proxy, so a received `x-forwarded-proto` is kept (set from the connection when absent) and the other three
 *   pass unchanged;
 * - `x-request-id`: a client's (printable ASCII, at most 200 characters) is kept when `trustRequestId`
 *   (`--request-id-trusted`), and replaced by a new one otherwise; a request without one gets a new one.
 * Works on node's flat `rawHeaders` in one pass; names come out lower case.
 */
import { nextRequestId } from '../request/request-id.js';
import { HOP_BY_HOP, removeNamedByConnection } from '../http/hop-by-hop.js';

/** Request headers never forwarded: hop-by-hop, and Expect. */
const REQUEST_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'expect']);

/** Headers a client's Connection header cannot remove: the ones the proxy reads, frames the body by, or adds. */
const REQUEST_KEEP: ReadonlySet<string> = new Set(['host', 'content-length', 'x-forwarded-for', 'x-forwarded-proto', 'x-request-id']);

export interface IngressHead {
  /** Flat `[name, value, ...]`, lower-case names, ready to forward. */
  readonly headers: string[];
  /** The Host header, or undefined when absent. */
  readonly host: string | undefined;
  /** More than one Host header (the request is refused: two readers could disagree on the actor). */
  readonly duplicateHost: boolean;
  /** The request announces a body (content-length > 0 or transfer-encoding). */
  readonly hasBody: boolean;
  /** The first `Content-Length`, when it is a plain decimal number (undefined: absent, or not one). */
  readonly contentLength: number | undefined;
  readonly requestId: string;
}

const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** Forwarding headers that pass only from a trusted hop (`trustedHops` > 0); a client's are removed. */
const FROM_TRUSTED_HOP_ONLY: ReadonlySet<string> = new Set(['forwarded', 'x-forwarded-host', 'x-real-ip']);

/**
 * `strip` holds lower-case names to remove (internal headers); `scheme` is the ingress connection's scheme;
 * `trustedHops` is the number of trusted proxies in front of this one; `trustRequestId`: the peer's
 * `x-request-id` is kept.
 */
export function sanitiseRequestHeaders(
  raw: readonly string[],
  remoteAddress: string,
  scheme: string,
  strip: ReadonlySet<string>,
  trustedHops = 0,
  trustRequestId = false,
): IngressHead {
  const trusted = trustedHops > 0;
  const out: string[] = [];
  let host: string | undefined;
  let duplicateHost = false;
  let hasBody = false;
  let contentLength: string | undefined;
  let requestId: string | undefined;
  let connection: string | undefined;
  let xff: string | undefined;
  let proto: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    if (REQUEST_DROP.has(name)) {
      if (name === 'connection') connection = connection === undefined ? value : `${connection},${value}`;
      else if (name === 'transfer-encoding') hasBody = true;
      continue;
    }
    if (strip.has(name)) continue;
    if (!trusted && FROM_TRUSTED_HOP_ONLY.has(name)) continue;
    switch (name) {
      case 'host':
        if (host !== undefined) duplicateHost = true;
        else host = value;
        break;
      case 'content-length':
        if (value !== '0') hasBody = true;
        contentLength ??= value;
        break;
      case 'x-forwarded-for':
        xff = xff === undefined ? value : `${xff}, ${value}`;
        continue;
      case 'x-forwarded-proto':
        if (trusted) proto ??= value;
        continue;
      case 'x-request-id':
        if (!trustRequestId || requestId !== undefined || !REQUEST_ID.test(value)) continue;
        requestId = value;
        break;
    }
    out.push(name, value);
  }
  if (connection !== undefined) removeNamedByConnection(out, connection, REQUEST_KEEP);
  if (requestId === undefined) {
    requestId = nextRequestId();
    out.push('x-request-id', requestId);
  }
  out.push('x-forwarded-for', xff === undefined ? remoteAddress : `${xff}, ${remoteAddress}`);
  out.push('x-forwarded-proto', proto ?? scheme);
  const declared = contentLength !== undefined && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  return { headers: out, host, duplicateHost, hasBody, contentLength: declared, requestId };
}
