/**
 * Every open tunnel of this process — upgraded connections (a 101 relayed) and CONNECT tunnels — with its
 * accounting, the `tunnels` block of `/stats`, and the drain: once `drain()` starts, no new upgrade or CONNECT is
 * accepted (`draining`), the open tunnels keep flowing, and those still open when the drain timeout runs out are
 * closed (reason `drain`).
 */
import type { Logger } from 'pino';
import type { ProxyContainment } from '../ops/containment.js';
import { TunnelStats, type TunnelBytes, type TunnelCloseReason, type TunnelKind } from '../ops/tunnel-stats.js';
import { untilEmpty } from '../../lib/until-empty.js';

/** One open tunnel as the hub sees it. */
export interface OpenTunnel {
  readonly kind: TunnelKind;
  /** Bytes so far (after the handshake). */
  bytes(): TunnelBytes;
  /** Closes both sides now; the tunnel reports back through `TunnelHub.closed`. */
  close(reason: TunnelCloseReason): void;
}

export class TunnelHub {
  readonly stats: TunnelStats;
  readonly #open = new Set<OpenTunnel>();
  readonly #active: Record<TunnelKind, number> = { upgrade: 0, connect: 0 };
  #draining = false;
  #onEmpty: (() => void) | undefined;

  constructor(
    readonly log: Logger,
    /** The containment boundary: a tunnel whose own event handling throws is closed alone (`internal`). */
    private readonly guard?: ProxyContainment,
  ) {
    this.stats = new TunnelStats({ active: (kind) => this.#active[kind], openBytes: (kind) => this.#openBytes(kind) });
  }

  /** `fn` as an event handler of `tunnel`, inside the containment boundary (`tunnel`): a throw closes that tunnel alone. */
  contained<A extends unknown[]>(tunnel: OpenTunnel, fn: (...args: A) => void): (...args: A) => void {
    const guard = this.guard;
    if (guard === undefined) return fn;
    return guard.wrap('tunnel', { fail: () => tunnel.close('internal') }, fn);
  }

  /** True once the drain started: new upgrades and CONNECTs are refused. */
  get draining(): boolean {
    return this.#draining;
  }

  get size(): number {
    return this.#open.size;
  }

  refused(kind: TunnelKind): void {
    this.stats.tallies[kind].refused++;
  }

  opened(tunnel: OpenTunnel): void {
    this.#open.add(tunnel);
    this.#active[tunnel.kind]++;
    this.stats.tallies[tunnel.kind].total++;
  }

  /** Called once by a tunnel when both its sides are closed. */
  closed(tunnel: OpenTunnel, reason: TunnelCloseReason, bytes: TunnelBytes): void {
    if (!this.#open.delete(tunnel)) return;
    this.#active[tunnel.kind]--;
    const t = this.stats.tallies[tunnel.kind];
    t.closed[reason]++;
    t.bytes.fromClient += bytes.fromClient;
    t.bytes.toClient += bytes.toClient;
    if (this.#open.size === 0) this.#onEmpty?.();
  }

  #openBytes(kind: TunnelKind): TunnelBytes {
    const sum = { fromClient: 0, toClient: 0 };
    for (const t of this.#open) {
      if (t.kind !== kind) continue;
      const b = t.bytes();
      sum.fromClient += b.fromClient;
      sum.toClient += b.toClient;
    }
    return sum;
  }

  /**
   * Refuses new tunnels from now on, waits up to `timeoutMs` for the open ones to close, then closes the rest.
   * Resolves true when every tunnel closed on its own.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.#draining = true;
    if (this.#open.size === 0) return true;
    const clean = await untilEmpty(timeoutMs, (onEmpty) => (this.#onEmpty = onEmpty));
    if (!clean) {
      this.log.warn({ tunnels: this.#open.size }, 'drain timeout: closing open tunnels');
      for (const t of [...this.#open]) t.close('drain');
    }
    return clean;
  }
}
