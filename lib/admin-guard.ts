/**
 * The guard every admin server installs (proxy, proxy cluster primary, extproc, apiserver-stub, the benchmark's
 * floor): every call, reads included, is refused unless
 * - `Host` names the admin itself: for a loopback listener 127.x.x.x, `localhost` or `[::1]` with the listener's
 *   port; for any other listener (a wildcard or an interface address) one of the machine's own IP addresses
 *   (loopback included: a port published by a container runtime arrives with the host's 127.0.0.1), `localhost`,
 *   or a single-label name (a compose service name such as `proxy`), with any port (published ports may differ).
 *   A DNS-rebinding page always sends a dotted name its author controls, so it can neither change nor read
 *   anything (the binding table names every running actor and its worker);
 * - `Origin`, when present, names the admin by the same rule (a cross-site form or fetch carries a foreign one;
 *   `Origin: null` is foreign too);
 * - the token matches, when the component runs with `--admin-token` (compared in constant time):
 *   `Authorization: Bearer <token>`, or Basic credentials with the token as the password and any user name, which
 *   is what a browser sends once its login prompt (a 401 offers both schemes) was answered: the admin's pages (the
 *   index, the proxy's dashboard, whose polls the browser then authenticates the same way) open in a browser.
 *   The browser attaches those credentials to a cross-site page's requests too, but that page cannot read an
 *   answer, and every state change (never a GET) carries its foreign Origin.
 * Only `GET`/`HEAD` of the health checks (`/ready`, `/live`) are always answered: load balancers and orchestrators
 * probe them with whatever Host they like. Host and Origin refusals are 403, a missing or wrong token 401; each with
 * a JSON `{ error, code }`. `decideAdminAccess` is the pure decision; `guardAdmin` installs it as an onRequest hook.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface AdminRequest {
  readonly method: string;
  /** The request path, without the query string. */
  readonly path: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly authorization: string | undefined;
}

/** Where the admin listens (the bound address and port) and what the machine calls itself. */
export interface AdminListener {
  readonly address: string;
  readonly port: number;
  /** The machine's own IP addresses (consulted for a non-loopback listener). */
  readonly ownAddresses: readonly string[];
}

export type AdminRefusalCode = 'ADMIN_FOREIGN_HOST' | 'ADMIN_FOREIGN_ORIGIN' | 'ADMIN_TOKEN_REQUIRED';

export type AdminDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'refuse'; readonly status: 401 | 403; readonly code: AdminRefusalCode; readonly error: string };

/** Health checks, answered to anyone: `GET`/`HEAD` of these paths only. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/ready', '/live']);
const PROBE_METHODS = new Set(['GET', 'HEAD']);

/** Whether a call is a health check, answered without any check. */
export function isOpenProbe(method: string, path: string): boolean {
  return PROBE_METHODS.has(method.toUpperCase()) && OPEN_PATHS.has(path);
}

interface Authority {
  /** Lower case, IPv6 without brackets. */
  readonly hostname: string;
  readonly port: number;
}

/** `host[:port]` as in a Host header (`[v6]:port` bracketed); undefined when malformed. */
export function parseAuthority(text: string, defaultPort = 80): Authority | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s/@]+))(?::(\d{1,5}))?$/.exec(text);
  if (m === null) return undefined;
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  if (port > 65535) return undefined;
  const hostname = (m[1] ?? m[2] ?? '').toLowerCase();
  if (m[1] !== undefined && !net.isIPv6(hostname)) return undefined;
  return { hostname, port };
}

function isLoopbackIp(ip: string): boolean {
  if (net.isIPv4(ip)) return ip.startsWith('127.');
  if (ip.startsWith('::ffff:')) return isLoopbackIp(ip.slice(7));
  return ip === '::1';
}

function isLoopbackName(hostname: string): boolean {
  return hostname === 'localhost' || isLoopbackIp(hostname);
}

/** Does `a` (from Host or Origin) name this admin? */
export function namesAdmin(a: Authority, listener: AdminListener): boolean {
  if (isLoopbackIp(listener.address)) return isLoopbackName(a.hostname) && a.port === listener.port;
  if (!net.isIP(a.hostname)) return a.hostname === 'localhost' || !a.hostname.includes('.');
  return isLoopbackIp(a.hostname) || a.hostname === listener.address.toLowerCase() || listener.ownAddresses.includes(a.hostname);
}

function originAuthority(origin: string): Authority | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return parseAuthority(url.host, url.protocol === 'https:' ? 443 : 80);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * The token an `Authorization` header presents: `Bearer <token>`, or `Basic` credentials whose password is the
 * token (any user name: what a browser's login prompt sends, so the index and the dashboard open in a browser).
 */
function presentedToken(authorization: string | undefined): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (bearer !== null) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(authorization ?? '');
  if (basic === null) return undefined;
  const credentials = Buffer.from(basic[1] as string, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  return colon < 0 || colon === credentials.length - 1 ? undefined : credentials.slice(colon + 1);
}

/** Constant-time comparison of the presented token with the expected one. */
function tokenMatches(authorization: string | undefined, token: string): boolean {
  const presented = presentedToken(authorization);
  const equal = timingSafeEqual(digest(presented ?? ''), digest(token));
  return equal && presented !== undefined;
}

/** The challenges of a 401: the bearer token, or (a browser) Basic with the token as the password. */
export const TOKEN_CHALLENGES: readonly string[] = Object.freeze(['Bearer realm="actor-edge admin"', 'Basic realm="actor-edge admin", charset="UTF-8"']);

function refuse(status: 401 | 403, code: AdminRefusalCode, error: string): AdminDecision {
  return { kind: 'refuse', status, code, error };
}

export function decideAdminAccess(req: AdminRequest, listener: AdminListener, token: string | undefined): AdminDecision {
  if (isOpenProbe(req.method, req.path)) return { kind: 'allow' };
  const host = req.host === undefined ? undefined : parseAuthority(req.host);
  if (host === undefined || !namesAdmin(host, listener)) {
    return refuse(403, 'ADMIN_FOREIGN_HOST', `admin: Host "${req.host ?? ''}" does not name this admin server; calls must address it directly`);
  }
  if (req.origin !== undefined) {
    const origin = originAuthority(req.origin);
    if (origin === undefined || !namesAdmin(origin, listener)) {
      return refuse(403, 'ADMIN_FOREIGN_ORIGIN', `admin: Origin "${req.origin}" is not this admin server; cross-site calls are refused`);
    }
  }
  if (token !== undefined && !tokenMatches(req.authorization, token)) {
    return refuse(401, 'ADMIN_TOKEN_REQUIRED', 'admin: this call needs "Authorization: Bearer <admin token>" (or Basic with the token as the password)');
  }
  return { kind: 'allow' };
}

/** The machine's own IP addresses, as `os.networkInterfaces()` reports them now. */
export function machineAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.toLowerCase()));
}

export interface AdminGuardOptions {
  /** When set, every call but the health checks also needs `Authorization: Bearer <token>`. */
  readonly token: string | undefined;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** Installs the guard on an admin server (applies to every route, also those registered later). */
export function guardAdmin(app: FastifyInstance, opts: AdminGuardOptions): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(req.url);
    if (isOpenProbe(req.method, path)) return;
    const bound = app.server.address();
    const listener: AdminListener = {
      address: bound !== null && typeof bound === 'object' ? bound.address : '',
      port: bound !== null && typeof bound === 'object' ? bound.port : 0,
      ownAddresses: machineAddresses(),
    };
    const headers = req.raw.headers;
    const decision = decideAdminAccess(
      { method: req.method, path, host: single(headers.host), origin: single(headers.origin), authorization: single(headers.authorization) },
      listener,
      opts.token,
    );
    if (decision.kind === 'refuse') {
      if (decision.status === 401) void reply.header('www-authenticate', [...TOKEN_CHALLENGES]);
      return reply.code(decision.status).send({ error: decision.error, code: decision.code });
    }
  });
}
