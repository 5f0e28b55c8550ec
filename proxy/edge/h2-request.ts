/**
 * An HTTP/2 request's head in the form the ingress works on for both protocols (node's flat HTTP/1.1
 * `rawHeaders`), so the same hygiene and the same request-target rules apply to every request:
 * - pseudo-headers are removed; `:authority` becomes Host (RFC 9113 §8.3.1; a request without `:authority` may
 *   carry Host instead, and one with neither is refused as having no Host);
 * - a Host header that differs from `:authority` makes the request malformed (refused 400, RFC 9113 §8.3.1);
 * - cookie fields split across header fields are joined with `; ` (RFC 9113 §8.2.3) for the HTTP/1.1 upstream.
 * Connection-specific headers and invalid pseudo-headers never get here: node's HTTP/2 layer resets such a stream
 * (PROTOCOL_ERROR, RFC 9113 §8.2.2 and §8.3).
 */

export interface H2Head {
  /** `[name, value, ...]` without pseudo-headers; Host first when `:authority` was given. */
  readonly raw: string[];
  /** Host and `:authority` name different authorities. */
  readonly authorityConflict: boolean;
}

export function h2RequestHead(rawHeaders: readonly string[]): H2Head {
  let authority: string | undefined;
  let host: string | undefined;
  let cookie: string | undefined;
  let authorityConflict = false;
  const rest: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    if (name.charCodeAt(0) === 58 /* ':' */) {
      if (name === ':authority') authority = value;
      continue;
    }
    if (name === 'host') {
      // Pseudo-headers come first: `:authority` is known here when the request has one.
      if (authority !== undefined) authorityConflict ||= value !== authority;
      else if (host === undefined) host = value;
      else rest.push(name, value); // a second Host: refused as for HTTP/1.1
      continue;
    }
    if (name === 'cookie') {
      cookie = cookie === undefined ? value : `${cookie}; ${value}`;
      continue;
    }
    rest.push(name, value);
  }
  const raw: string[] = [];
  const effective = authority ?? host;
  if (effective !== undefined) raw.push('host', effective);
  for (const v of rest) raw.push(v);
  if (cookie !== undefined) raw.push('cookie', cookie);
  return { raw, authorityConflict };
}
