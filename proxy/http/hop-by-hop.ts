/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and are never forwarded, in either
 * direction. That is Connection itself, every header Connection names, and the fixed list below (Proxy-Connection,
 * Keep-Alive, TE, Transfer-Encoding, Upgrade, plus Trailer, which older proxies treat the same way, and
 * HTTP2-Settings, the h2c upgrade's: RFC 9113 §8.2.2 lists it among the connection-specific fields an intermediary
 * must remove before a message goes to an HTTP/2 peer, whose stack refuses them).
 *
 * A client's Upgrade and Connection are never forwarded as received either: a WebSocket handshake the proxy
 * forwards gets them from the router (undici's `upgrade` option), and the 101's from `tunnels/upgrade-tunnel.ts`.
 *
 * Used by the ingress for request headers (`ingress-headers.ts`) and by the router for response headers
 * (`relayed-headers.ts`); each direction adds its own rules there.
 */

export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'proxy-connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade', 'trailer', 'http2-settings']);

/**
 * The lower-case names a Connection value names, other than `close` and the hop-by-hop headers (removed anyway)
 * and other than `keep` (names the direction must not lose, e.g. `content-length`). Undefined when there are none.
 */
export function namedByConnection(connection: string, keep: ReadonlySet<string>): Set<string> | undefined {
  const c = connection.toLowerCase();
  if (c === 'keep-alive' || c === 'close') return undefined; // the usual values name nothing else
  let named: Set<string> | undefined;
  for (const token of c.split(',')) {
    const t = token.trim();
    if (t === '' || t === 'close' || HOP_BY_HOP.has(t) || keep.has(t)) continue;
    (named ??= new Set()).add(t);
  }
  return named;
}

/** Removes from node's flat `[name, value, ...]` list every header `named` holds (names compared in lower case). */
export function removeNamed(list: string[], named: ReadonlySet<string>): void {
  for (let i = 0; i < list.length; i += 2) {
    if (named.has((list[i] as string).toLowerCase())) {
      list.splice(i, 2);
      i -= 2;
    }
  }
}

/** Removes the headers a Connection value names, except `keep`. */
export function removeNamedByConnection(list: string[], connection: string, keep: ReadonlySet<string>): void {
  const named = namedByConnection(connection, keep);
  if (named !== undefined) removeNamed(list, named);
}
