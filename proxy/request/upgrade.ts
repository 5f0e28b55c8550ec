/**
 * An upgrade (WebSocket) handshake as the edge hands it to the chain (`ProxyRequest.upgrade`), and an open tunnel
 * as the lifecycle sees it once the response writer opened it (`ProxyRequest.tunnel`): an upgraded connection
 * after the worker's 101, or a CONNECT tunnel.
 */
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';

export interface UpgradeIntent {
  /** The upgrade token forwarded (`websocket`, or one `--upgrade-allow` names). */
  readonly token: string;
  /** Bytes the client sent after its request head (already the tunnel's). */
  readonly head: Buffer;
}

export interface OpenedTunnel {
  readonly kind: 'upgrade' | 'connect';
  /** `performance.now()` when the tunnel opened. */
  readonly openedAt: number;
  /** Why it closed (undefined while open). */
  readonly reason: TunnelCloseReason | undefined;
  /** Bytes so far, or in all once closed. */
  bytes(): TunnelBytes;
  /** Both sides are closed (and the tunnel accounted). */
  readonly closed: boolean;
  /** Calls `listener` once both sides are closed (at once when they are). */
  onClose(listener: () => void): void;
  /** Closes both sides now, for `reason`. */
  close(reason: TunnelCloseReason): void;
}
