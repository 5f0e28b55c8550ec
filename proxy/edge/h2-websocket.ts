/**
 * WebSocket over HTTP/2 (RFC 8441): the HTTP/2 engine announces SETTINGS_ENABLE_CONNECT_PROTOCOL, and a stream
 * with `:method CONNECT` and `:protocol websocket` is a WebSocket handshake. It runs the chain as the HTTP/1.1
 * handshake does (`upgrade-request.ts`: cache hit or miss, a re-run on a stale answer), forwarded to the worker as an
 * HTTP/1.1 `GET` with `Upgrade: websocket` — with a fresh `Sec-WebSocket-Key`, which HTTP/2 has no use for. On the
 * worker's 101 the stream is answered `:status 200` and carries the tunnel (`tunnels/upgrade-tunnel.ts`); any
 * other answer is relayed as the stream's response.
 *
 * Decided here, from the stream's head:
 * - `none`: not an extended CONNECT, an ordinary request;
 * - `forward`: `:protocol` is `websocket` or one `--upgrade-allow` names;
 * - `refuse`: any other `:protocol` → 403 `PROXY_ERR_UPGRADE_REFUSED`.
 */
import { randomBytes } from 'node:crypto';

export type ExtendedConnect =
  | { readonly kind: 'none' }
  | { readonly kind: 'forward'; readonly token: string }
  | { readonly kind: 'refuse'; readonly details: string };

const NONE: ExtendedConnect = Object.freeze({ kind: 'none' });

export function decideExtendedConnect(method: string, protocol: string | string[] | undefined, allowed: ReadonlySet<string>): ExtendedConnect {
  if (method !== 'CONNECT' || typeof protocol !== 'string') return NONE;
  const token = protocol.trim().toLowerCase();
  if (!allowed.has(token)) return { kind: 'refuse', details: `:protocol "${token}" is not forwarded` };
  return { kind: 'forward', token };
}

/** The head of the HTTP/1.1 handshake towards the worker: a WebSocket key when the stream has none. */
export function addHandshakeHeaders(raw: string[], token: string): void {
  if (token !== 'websocket') return;
  for (let i = 0; i < raw.length; i += 2) if (raw[i] === 'sec-websocket-key') return;
  raw.push('sec-websocket-key', randomBytes(16).toString('base64'));
}
