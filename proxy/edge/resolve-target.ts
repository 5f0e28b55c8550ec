/**
 * The request target (RFC 9112 §3.2) and the request's authority, decided once at the ingress before any filter
 * runs. Only targets the proxy forwards pass; everything else is answered locally, so no client can make the
 * upstream client refuse a request (which would look like a failing worker):
 *
 * - origin-form (`/path?query`): the authority is the Host header;
 * - absolute-form with scheme `http` (`http://authority/path?query`): the target's authority replaces Host
 *   (RFC 9112 §3.2.2) for the cache, ext_proc and the worker alike — the forwarded Host header is rewritten —
 *   and the worker receives origin-form (`/path?query`, `/` when the path is empty);
 * - any other scheme, an absolute-form target without an authority, or userinfo (`user:secret@`) in it → 400
 *   `PROXY_ERR_INVALID_TARGET`;
 * - anything not starting with `/` otherwise (`OPTIONS *`, authority-form) → 404
 *   `PROXY_ERR_ABSOLUTE_PATH_REJECTED`, as Envoy's connection manager (`absolute_path_rejected`);
 * - no Host (origin-form) → 400 `PROXY_ERR_NO_HOST`, two Host headers → 400 `PROXY_ERR_DUPLICATE_HOST`; a Host
 *   or target authority that is not `host[:port]` in RFC 3986 characters — userinfo included — → 400
 *   `PROXY_ERR_INVALID_AUTHORITY` or `PROXY_ERR_INVALID_TARGET` (Envoy's `invalid_authority`).
 */
import { ERRORS, type ProxyErrorSpec } from '../http/errors.js';
import type { IngressHead } from './ingress-headers.js';

/** What the request is forwarded as; `headers` is the sanitised list with Host set to `authority`. */
interface TargetParts {
  readonly path: string;
  readonly authority: string;
  readonly headers: string[];
}

export type RequestTarget =
  | ({ readonly kind: 'forward' } & TargetParts)
  /** Refused at the ingress; the parts are as received (for the access log). */
  | ({ readonly kind: 'refuse'; readonly error: ProxyErrorSpec; readonly details: string } & TargetParts);

/** RFC 3986 `host [":" port]`: reg-name, IPv4 or IP-literal characters, pct-encoding, and the port colon. */
const AUTHORITY = /^[A-Za-z0-9\-._~!$&'()*+,;=%:[\]]+$/;
/** An absolute-URI's scheme (RFC 3986 §3.1) and, when present, the `//` that starts its authority. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(\/\/)?/;

/** Decides the target of a request whose head the ingress sanitised. */
export function resolveRequestTarget(url: string, head: IngressHead): RequestTarget {
  const host = head.host ?? '';
  if (head.duplicateHost) return refuse(url, head, ERRORS.DUPLICATE_HOST, 'more than one Host header');
  if (host !== '') {
    const problem = authorityProblem(host);
    if (problem !== undefined) return refuse(url, head, ERRORS.INVALID_AUTHORITY, `Host: ${problem}`);
  }
  if (url.startsWith('/')) {
    if (host === '') return refuse(url, head, ERRORS.NO_HOST, 'no Host header');
    return { kind: 'forward', path: url, authority: host, headers: head.headers };
  }
  const scheme = SCHEME.exec(url);
  if (scheme === null) return refuse(url, head, ERRORS.PATH_NOT_ABSOLUTE, 'absolute_path_rejected');
  if ((scheme[1] as string).toLowerCase() !== 'http') return refuse(url, head, ERRORS.INVALID_TARGET, `scheme "${scheme[1]}" is not forwarded`);
  if (scheme[2] === undefined) return refuse(url, head, ERRORS.INVALID_TARGET, 'absolute-form target without an authority');
  const rest = url.slice(scheme[0].length);
  let end = rest.search(/[/?#]/);
  if (end === -1) end = rest.length;
  const authority = rest.slice(0, end);
  const problem = authorityProblem(authority);
  if (problem !== undefined) return refuse(url, head, ERRORS.INVALID_TARGET, `target authority: ${problem}`);
  const tail = rest.slice(end);
  const path = tail.startsWith('/') ? tail : `/${tail}`;
  return { kind: 'forward', path, authority, headers: authority === host ? head.headers : withHost(head.headers, authority) };
}

/** A refusal, with the parts as received (for the access log). */
function refuse(url: string, head: IngressHead, error: ProxyErrorSpec, details: string): RequestTarget {
  return { kind: 'refuse', error, details, path: url, authority: head.host ?? '', headers: head.headers };
}

/** Why `authority` is not a plain `host[:port]`, or undefined when it is. */
function authorityProblem(authority: string): string | undefined {
  if (authority === '') return 'empty';
  if (authority.includes('@')) return 'userinfo is not allowed';
  if (!AUTHORITY.test(authority)) return 'invalid characters';
  return undefined;
}

/** A copy of the flat header list whose Host is `authority` (added when absent). */
function withHost(headers: readonly string[], authority: string): string[] {
  const out: string[] = [];
  let set = false;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === 'host') {
      if (!set) out.push('host', authority);
      set = true;
    } else {
      out.push(headers[i] as string, headers[i + 1] as string);
    }
  }
  if (!set) out.push('host', authority);
  return out;
}
