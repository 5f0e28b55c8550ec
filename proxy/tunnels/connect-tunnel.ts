/**
 * A CONNECT tunnel (`edge/connect-listener.ts`): once answered 200, its socket carries a new HTTP/1.1 connection
 * into the ingress itself, so the tunnel is accounted from the socket's own counters (less what was read before
 * the tunnel) until the socket closes. Closed by `client` (its FIN came first), `upstream` (the ingress side
 * closed it), or `drain`.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { OpenedTunnel } from '../request/upgrade.js';
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';
import type { OpenTunnel, TunnelHub } from './hub.js';

export class ConnectTunnel implements OpenTunnel, OpenedTunnel {
  readonly kind = 'connect' as const;
  readonly openedAt = performance.now();
  readonly #readBase: number;
  readonly #writtenBase: number;
  #reason: TunnelCloseReason | undefined;
  #final: TunnelBytes | undefined;
  readonly #listeners: (() => void)[] = [];

  /** `head`: bytes the client sent after its CONNECT head (the tunnel's first bytes). */
  constructor(
    private readonly socket: Socket,
    head: Buffer,
    hub: TunnelHub,
  ) {
    this.#readBase = socket.bytesRead - head.length;
    this.#writtenBase = socket.bytesWritten;
    hub.opened(this);
    socket.once('end', () => (this.#reason ??= 'client'));
    socket.once('close', hub.contained(this, () => {
      this.#final = this.bytes();
      this.#reason ??= 'upstream';
      hub.closed(this, this.#reason, this.#final);
      for (const l of this.#listeners.splice(0)) l();
    }));
  }

  get reason(): TunnelCloseReason | undefined {
    return this.#final === undefined ? undefined : this.#reason;
  }

  get closed(): boolean {
    return this.#final !== undefined;
  }

  onClose(listener: () => void): void {
    if (this.#final !== undefined) listener();
    else this.#listeners.push(listener);
  }

  bytes(): TunnelBytes {
    return this.#final ?? { fromClient: this.socket.bytesRead - this.#readBase, toClient: this.socket.bytesWritten - this.#writtenBase };
  }

  close(reason: TunnelCloseReason): void {
    this.#reason ??= reason;
    this.socket.destroy();
  }
}
