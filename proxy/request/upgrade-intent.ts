/**
 * An upgrade (WebSocket) handshake as the ingress hands it to the router (`ProxyRequest.upgrade`), and the open
 * tunnel as the ingress sees it once the router relayed the worker's 101 (`upstream/tunnel.ts`).
 */
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';

export interface OpenedUpgrade {
  /** `performance.now()` when the 101 was relayed. */
  readonly openedAt: number;
  /** Why it closed (undefined while open). */
  readonly reason: TunnelCloseReason | undefined;
  /** Bytes so far, or in all once closed. */
  bytes(): TunnelBytes;
  /** Called once when both sides are closed. */
  onClose(listener: () => void): void;
}

export interface UpgradeIntent {
  /** The upgrade token forwarded (`websocket`, or one `--upgrade-allow` names). */
  readonly token: string;
  /** Bytes the client sent after its request head (already the tunnel's). */
  readonly head: Buffer;
  /** The 101 was relayed and the tunnel is open (called once). */
  opened(tunnel: OpenedUpgrade): void;
}
