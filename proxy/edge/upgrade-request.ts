/**
 * What the ingress does with a request node:http hands over as an upgrade (`Connection: upgrade` and an `Upgrade`
 * header; a request with `Upgrade` but without `Connection: upgrade` is an ordinary request, whose hop-by-hop
 * Upgrade is dropped):
 * - `forward`: the first token of `Upgrade` is `websocket` (on a GET) or one `--upgrade-allow` names: the handshake
 *   runs the chain and the router forwards it as an upgrade;
 * - `plain`: `h2c` — HTTP/2 over cleartext is never forwarded: the request is served as HTTP/1.1, its Upgrade
 *   ignored (RFC 9110 §7.8 lets a server ignore it; Envoy does the same);
 * - `refuse`: any other token, a WebSocket handshake that is not a GET, or an upgrade request with a body →
 *   403 `PROXY_ERR_UPGRADE_REFUSED`.
 */
import type { IncomingMessage } from 'node:http';

export type UpgradeDecision =
  | { readonly kind: 'forward'; readonly token: string }
  | { readonly kind: 'plain' }
  | { readonly kind: 'refuse'; readonly details: string };

/** The first protocol an `Upgrade` value names, lower case, without its `/version`. */
export function upgradeToken(value: string | undefined): string {
  const first = (value ?? '').split(',')[0]?.trim().toLowerCase() ?? '';
  const slash = first.indexOf('/');
  return slash === -1 ? first : first.slice(0, slash);
}

export function decideUpgrade(req: IncomingMessage, allowed: ReadonlySet<string>): UpgradeDecision {
  const token = upgradeToken(req.headers.upgrade);
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (hasBody) return { kind: 'refuse', details: 'an upgrade request with a body' };
  if (token === 'h2c') return { kind: 'plain' };
  if (!allowed.has(token)) return { kind: 'refuse', details: `upgrade token "${token}" is not forwarded` };
  if (token === 'websocket' && req.method !== 'GET') return { kind: 'refuse', details: `a WebSocket handshake must be a GET, not ${req.method}` };
  return { kind: 'forward', token };
}
