/**
 * An upgraded connection after the worker's 101: the client's socket and the worker's socket relay bytes both ways
 * (`pipe`, so a side that stops reading back-pressures the other: the proxy holds at most one socket buffer per
 * direction), with half-close (a side's FIN is passed on; the other side may still send), and an idle timeout (no
 * byte either way for `--tunnel-idle-timeout-ms`). When either socket closes for good, the other is closed too: a
 * tunnel is never re-run once open. The tunnel reports to the hub once both sockets are closed.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ProxyRequest } from '../request/context.js';
import type { OpenedUpgrade, UpgradeIntent } from '../request/upgrade-intent.js';
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';
import type { OpenTunnel, TunnelHub } from './tunnel-hub.js';
import { relayHeaders } from '../edge/response-headers.js';
import { ResponseOutcome } from './outcome.js';

export interface TunnelDeps {
  readonly hub: TunnelHub;
  readonly idleTimeoutMs: number;
}

/** Writes the 101 to the client and opens the tunnel; the pool slot (`release`) is held until it closes. */
export function relayUpgrade(
  ctx: ProxyRequest,
  intent: UpgradeIntent,
  status: number,
  raw: readonly Buffer[],
  upstream: Socket,
  release: () => void,
  deps: TunnelDeps,
): ResponseOutcome {
  const client = ctx.req.socket;
  const headers = relayHeaders(raw);
  if (ctx.downstreamClosed || client.destroyed) {
    upstream.destroy();
    release();
    return new ResponseOutcome(status, headers);
  }
  ctx.res.detachSocket(client);
  let head = `HTTP/1.1 ${status} Switching Protocols\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  head += `Connection: Upgrade\r\nUpgrade: ${intent.token}\r\n\r\n`;
  client.write(head, 'latin1');
  ctx.responseState = 'started';
  const tunnel = new UpgradeTunnel(client, upstream, intent.head, deps, release);
  intent.opened(tunnel);
  return new ResponseOutcome(status, headers);
}

type Listener = () => void;

export class UpgradeTunnel implements OpenTunnel, OpenedUpgrade {
  readonly kind = 'upgrade' as const;
  readonly openedAt = performance.now();
  #reason: TunnelCloseReason | undefined;
  #open = 2;
  #idle: NodeJS.Timeout | undefined;
  readonly #readBase: number;
  readonly #writtenBase: number;
  readonly #closeListeners: Listener[] = [];
  #finalBytes: TunnelBytes | undefined;

  constructor(
    private readonly client: Socket,
    private readonly upstream: Socket,
    head: Buffer,
    private readonly deps: TunnelDeps,
    private readonly release: () => void,
  ) {
    // Bytes already read past the request head belong to the tunnel.
    this.#readBase = client.bytesRead - head.length;
    this.#writtenBase = client.bytesWritten;
    deps.hub.opened(this);
    upstream.allowHalfOpen = true; // the worker's FIN is passed on, not answered with ours
    upstream.setNoDelay(true);
    if (head.length > 0) upstream.write(head);
    this.#wire(client, upstream, 'client');
    this.#wire(upstream, client, 'upstream');
    if (deps.idleTimeoutMs > 0) {
      this.#idle = setTimeout(() => this.close('idle'), deps.idleTimeoutMs);
      const touch = (): void => void this.#idle?.refresh();
      client.on('data', touch);
      upstream.on('data', touch);
    }
    client.resume();
  }

  #wire(from: Socket | Duplex, to: Socket, side: 'client' | 'upstream'): void {
    from.pipe(to);
    from.once('end', () => (this.#reason ??= side));
    from.on('error', () => {
      this.#reason ??= side;
      to.destroy();
    });
    from.once('close', () => {
      this.#reason ??= side;
      // Nothing more can go to or come from this side: finish the other once its pending bytes are out.
      if (side === 'client') to.destroy();
      else if (!to.destroyed) to.end(() => to.destroy());
      if (--this.#open === 0) this.#closed();
    });
  }

  bytes(): TunnelBytes {
    return this.#finalBytes ?? { fromClient: this.client.bytesRead - this.#readBase, toClient: this.client.bytesWritten - this.#writtenBase };
  }

  get reason(): TunnelCloseReason | undefined {
    return this.#reason;
  }

  /** Called once when both sides are closed (after the hub counted it). */
  onClose(listener: Listener): void {
    this.#closeListeners.push(listener);
  }

  close(reason: TunnelCloseReason): void {
    this.#reason ??= reason;
    this.client.destroy();
    this.upstream.destroy();
  }

  #closed(): void {
    clearTimeout(this.#idle);
    this.#finalBytes = this.bytes();
    this.release();
    this.deps.hub.closed(this, this.#reason ?? 'client', this.#finalBytes);
    for (const l of this.#closeListeners) l();
  }
}
