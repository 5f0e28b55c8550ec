/**
 * An upgraded connection after the worker's 101: the client's side (a socket, or an HTTP/2 stream for RFC 8441,
 * handed over by the exchange's `openTunnel`) and the worker's socket relay bytes both ways (`pipe`, so a side
 * that stops reading back-pressures the other: the proxy holds at most one buffer per direction; an HTTP/2
 * stream's flow control is its backpressure), with half-close (a side's FIN is passed on; the other side may still
 * send), and an idle timeout (no byte either way for `--tunnel-idle-timeout-ms`). When either side closes for good,
 * the other is closed too: a tunnel is never re-run once open. The tunnel reports to the hub once both sides are
 * closed.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { OpenedTunnel } from '../request/upgrade.js';
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';
import type { OpenTunnel, TunnelHub } from './hub.js';

export interface TunnelDeps {
  readonly hub: TunnelHub;
  readonly idleTimeoutMs: number;
}

/** Bytes through the tunnel, counted as they pass (the same way for a socket and an HTTP/2 stream). */
function countedBytes(client: Duplex, upstream: Socket, head: Buffer): () => TunnelBytes {
  const bytes = { fromClient: head.length, toClient: 0 };
  client.on('data', (chunk: Buffer) => (bytes.fromClient += chunk.length));
  upstream.on('data', (chunk: Buffer) => (bytes.toClient += chunk.length));
  return () => ({ ...bytes });
}

type Listener = () => void;

export class UpgradeTunnel implements OpenTunnel, OpenedTunnel {
  readonly kind = 'upgrade' as const;
  readonly openedAt = performance.now();
  #reason: TunnelCloseReason | undefined;
  #open = 2;
  #idle: NodeJS.Timeout | undefined;
  readonly #bytes: () => TunnelBytes;
  readonly #closeListeners: Listener[] = [];
  #finalBytes: TunnelBytes | undefined;
  #closedBoth = false;

  constructor(
    private readonly client: Duplex,
    private readonly upstream: Socket,
    head: Buffer,
    private readonly deps: TunnelDeps,
    private readonly release: () => void,
  ) {
    this.#bytes = countedBytes(client, upstream, head);
    deps.hub.opened(this);
    upstream.allowHalfOpen = true; // the worker's FIN is passed on, not answered with ours
    upstream.setNoDelay(true);
    if (head.length > 0) upstream.write(head);
    this.#wire(client, upstream, 'client');
    this.#wire(upstream, client, 'upstream');
    if (deps.idleTimeoutMs > 0) {
      this.#idle = setTimeout(deps.hub.contained(this, () => this.close('idle')), deps.idleTimeoutMs);
      const touch = (): void => void this.#idle?.refresh();
      client.on('data', touch);
      upstream.on('data', touch);
    }
    client.resume();
  }

  #wire(from: Duplex, to: Duplex, side: 'client' | 'upstream'): void {
    const hub = this.deps.hub;
    from.pipe(to);
    from.once('end', () => (this.#reason ??= side));
    from.on('error', hub.contained(this, () => {
      this.#reason ??= side;
      to.destroy();
    }));
    from.once('close', hub.contained(this, () => {
      this.#reason ??= side;
      // Nothing more can go to or come from this side: finish the other once its pending bytes are out.
      if (side === 'client') to.destroy();
      else if (!to.destroyed) to.end(() => to.destroy());
      if (--this.#open === 0) this.#closed();
    }));
  }

  bytes(): TunnelBytes {
    return this.#finalBytes ?? this.#bytes();
  }

  get reason(): TunnelCloseReason | undefined {
    return this.#reason;
  }

  get closed(): boolean {
    return this.#closedBoth;
  }

  /** Called once when both sides are closed (after the hub counted it). */
  onClose(listener: Listener): void {
    if (this.#closedBoth) listener();
    else this.#closeListeners.push(listener);
  }

  close(reason: TunnelCloseReason): void {
    this.#reason ??= reason;
    this.client.destroy();
    this.upstream.destroy();
  }

  #closed(): void {
    this.#closedBoth = true;
    clearTimeout(this.#idle);
    this.#finalBytes = this.bytes();
    this.release();
    this.deps.hub.closed(this, this.#reason ?? 'client', this.#finalBytes);
    for (const l of this.#closeListeners) l();
  }
}
