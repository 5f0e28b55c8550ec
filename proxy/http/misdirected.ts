/**
 * The client-facing 421 Misdirected Request (RFC 9110 §15.5.20, RFC 9113 §9.1.2). Behind a load balancer that
 * hashes TLS connections by their SNI, a replica owns the actors whose names hash to it; an HTTP/2 client that
 * coalesces connections (RFC 9113 §9.1.1: one certificate covers every actor) may send this replica a request for
 * an actor that hashes elsewhere. With `--misdirected-421 on` such a request is answered 421 before any filter
 * runs, and the client retries it on a connection of its own for that authority, whatever the method.
 *
 * This is the proxy's own answer to its client. It has nothing to do with a worker's internal
 * `421 + X-Ate-Assignment-Stale: true` (which the proxy consumes, re-running the request), and it carries no such
 * header.
 */

export type SniCheck =
  /** The request may be served on this connection. */
  | { readonly kind: 'serve' }
  /** The request's authority is not the name the connection was opened for. */
  | { readonly kind: 'misdirected'; readonly host: string; readonly sni: string };

const SERVE: SniCheck = Object.freeze({ kind: 'serve' });

/** A name compared the way DNS compares it: case-insensitive, without the root's trailing dot. */
function normalise(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** The host of a `host[:port]` authority (an IP-literal keeps its brackets). */
export function authorityHost(authority: string): string {
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    return end === -1 ? authority : authority.slice(0, end + 1);
  }
  const colon = authority.lastIndexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

/**
 * Whether a request for `authority` may be served on a TLS connection whose client sent `sni` (node's
 * `TLSSocket.servername`: a string, or false/undefined when the client sent none). A client that sent no SNI (one
 * that connected by IP address, which SNI cannot carry) chose no replica by name, so its requests are served.
 */
export function checkSni(authority: string, sni: string | false | null | undefined): SniCheck {
  if (typeof sni !== 'string' || sni === '') return SERVE;
  const host = normalise(authorityHost(authority));
  const name = normalise(sni);
  return host === name ? SERVE : { kind: 'misdirected', host, sni: name };
}
