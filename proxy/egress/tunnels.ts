/**
 * The egress tunnels of this process: each actor's count (a CONNECT holds a place from its admission — the verdict
 * and the dial included — until its tunnel closes, so a flood from one identity is bounded before it reaches
 * ext_proc), the open tunnels and their bytes, and the drain: from `drain()` on no CONNECT is admitted, the open
 * tunnels keep flowing, and those still open when the drain timeout runs out are closed (`drain`).
 */
import type { EgressBytes } from './egress-stats.js';
import type { EgressTunnel } from './tunnel.js';
import { untilEmpty } from '../../lib/until-empty.js';

/** One actor's place, held by one CONNECT; `release` is idempotent. */
export interface ActorPlace {
  release(): void;
}

export class EgressTunnels {
  readonly #perActor = new Map<string, number>();
  readonly #open = new Set<EgressTunnel>();
  #draining = false;
  #onEmpty: (() => void) | undefined;

  constructor(readonly maxPerActor: number) {}

  get draining(): boolean {
    return this.#draining;
  }

  /** Tunnels open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Actors with a tunnel open or a CONNECT being decided. */
  get actors(): number {
    return this.#perActor.size;
  }

  /** The places `actor` holds now. */
  held(actor: string): number {
    return this.#perActor.get(actor) ?? 0;
  }

  /** A place for one more CONNECT of `actor`, or undefined when it holds `maxPerActor` already. */
  reserve(actor: string): ActorPlace | undefined {
    const n = this.#perActor.get(actor) ?? 0;
    if (n >= this.maxPerActor) return undefined;
    this.#perActor.set(actor, n + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const left = (this.#perActor.get(actor) ?? 1) - 1;
        if (left <= 0) this.#perActor.delete(actor);
        else this.#perActor.set(actor, left);
      },
    };
  }

  opened(tunnel: EgressTunnel): void {
    this.#open.add(tunnel);
  }

  closed(tunnel: EgressTunnel): void {
    if (this.#open.delete(tunnel) && this.#open.size === 0) this.#onEmpty?.();
  }

  openBytes(): EgressBytes {
    const sum = { fromActor: 0, toActor: 0 };
    for (const t of this.#open) {
      const b = t.bytes();
      sum.fromActor += b.fromActor;
      sum.toActor += b.toActor;
    }
    return sum;
  }

  /** No CONNECT is admitted from now on. */
  stopAdmitting(): void {
    this.#draining = true;
  }

  /**
   * Stops admitting, waits up to `timeoutMs` for the open tunnels to close, then closes the rest. Resolves true when
   * every tunnel closed on its own.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.#draining = true;
    if (this.#open.size === 0) return true;
    const clean = await untilEmpty(timeoutMs, (onEmpty) => (this.#onEmpty = onEmpty));
    if (!clean) this.closeAll();
    return clean;
  }

  /** Closes every open tunnel (`drain`). */
  closeAll(): void {
    for (const t of [...this.#open]) t.close('drain');
  }
}
