/**
 * Counters for long-lived connections: upgraded connections (WebSocket) and CONNECT tunnels. Plain numbers bumped
 * when a tunnel opens, is refused or closes; bytes of the tunnels still open are added when read, so `/stats` and
 * `/metrics` see traffic before a tunnel closes. `/stats` reports them since the last reset (lib/since-reset.ts),
 * except `active`, which is the number open now.
 */
import { SinceReset } from '../../lib/since-reset.js';

export type TunnelKind = 'upgrade' | 'connect';
export const TUNNEL_KINDS: readonly TunnelKind[] = ['upgrade', 'connect'];

/**
 * Why a tunnel closed: `client` / `upstream` (that side closed or failed first), `idle` (`--tunnel-idle-timeout-ms`),
 * `drain` (still open when the drain timeout ran out).
 */
export type TunnelCloseReason = 'client' | 'upstream' | 'idle' | 'drain' | 'internal';
export const CLOSE_REASONS: readonly TunnelCloseReason[] = ['client', 'upstream', 'idle', 'drain', 'internal'];

/** Bytes through a tunnel: `fromClient` (client → proxy), `toClient` (proxy → client). */
export interface TunnelBytes {
  fromClient: number;
  toClient: number;
}

export class TunnelTally {
  /** Tunnels opened (a 101 relayed, or a CONNECT answered 200). */
  total = 0;
  /** Upgrade or CONNECT requests the proxy itself refused (token, target, drain). */
  refused = 0;
  /** Bytes of closed tunnels. */
  readonly bytes: TunnelBytes = { fromClient: 0, toClient: 0 };
  readonly closed: Record<TunnelCloseReason, number> = { client: 0, upstream: 0, idle: 0, drain: 0, internal: 0 };
}

export interface TunnelKindBlock {
  readonly active: number;
  readonly total: number;
  readonly refused: number;
  readonly bytes: TunnelBytes;
  readonly closed: Record<TunnelCloseReason, number>;
}

export type TunnelStatsBlock = Record<TunnelKind, TunnelKindBlock>;

/** What the stats read from the open tunnels. */
export interface OpenTunnels {
  active(kind: TunnelKind): number;
  /** Bytes so far of the tunnels of `kind` still open. */
  openBytes(kind: TunnelKind): TunnelBytes;
}

export class TunnelStats {
  readonly tallies: Record<TunnelKind, TunnelTally> = { upgrade: new TunnelTally(), connect: new TunnelTally() };
  readonly #sinceReset: SinceReset<Record<TunnelKind, TunnelTally>>;

  constructor(private readonly open: OpenTunnels) {
    this.#sinceReset = new SinceReset(() => this.lifetime());
  }

  /** Lifetime tallies, open tunnels' bytes included (they only grow: a tunnel's bytes move to `bytes` as it closes). */
  lifetime(): Record<TunnelKind, TunnelTally> {
    const out = {} as Record<TunnelKind, TunnelTally>;
    for (const kind of TUNNEL_KINDS) {
      const t = this.tallies[kind];
      const live = this.open.openBytes(kind);
      out[kind] = {
        total: t.total,
        refused: t.refused,
        bytes: { fromClient: t.bytes.fromClient + live.fromClient, toClient: t.bytes.toClient + live.toClient },
        closed: t.closed,
      };
    }
    return out;
  }

  /** Tunnels of `kind` open now. */
  active(kind: TunnelKind): number {
    return this.open.active(kind);
  }

  reset(): void {
    this.#sinceReset.reset();
  }

  snapshot(): TunnelStatsBlock {
    const d = this.#sinceReset.current();
    const block = (kind: TunnelKind): TunnelKindBlock => ({
      active: this.open.active(kind),
      total: d[kind].total,
      refused: d[kind].refused,
      bytes: { fromClient: d[kind].bytes.fromClient, toClient: d[kind].bytes.toClient },
      closed: { ...d[kind].closed },
    });
    return { upgrade: block('upgrade'), connect: block('connect') };
  }
}
