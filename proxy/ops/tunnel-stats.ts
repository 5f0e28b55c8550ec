/**
 * Counters for long-lived connections: upgraded connections (WebSocket) and CONNECT tunnels, declared once
 * (`TUNNEL_STATS`: the `/stats` `tunnels` block and its metrics). Plain numbers bumped
 * when a tunnel opens, is refused or closes; bytes of the tunnels still open are added when read, so `/stats` and
 * `/metrics` see traffic before a tunnel closes. `/stats` reports them since the last reset (lib/since-reset.ts),
 * except `active`, which is the number open now.
 */
import { SinceReset, type Tallies } from '../../lib/since-reset.js';
import { declare, type StatsOf } from '../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../lib/stats/derive.js';

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

/** What the stats read from the open tunnels. */
export interface OpenTunnels {
  active(kind: TunnelKind): number;
  /** Bytes so far of the tunnels of `kind` still open. */
  openBytes(kind: TunnelKind): TunnelBytes;
}

/** What the declarations read: the tallies per kind (since the last reset for `/stats`, lifetime for `/metrics`) and the open tunnels. */
export interface TunnelView {
  readonly counts: Readonly<Record<TunnelKind, Tallies<TunnelTally>>>;
  readonly open: OpenTunnels;
}

const ACTIVE = { kind: 'gauge', name: 'tunnels_active', help: 'Upgraded connections (kind=upgrade) and CONNECT tunnels (kind=connect) open now.' } as const;
const TOTAL = { kind: 'counter', name: 'tunnels_total', help: 'Upgraded connections and CONNECT tunnels opened.' } as const;
const REFUSED = { kind: 'counter', name: 'tunnels_refused_total', help: 'Upgrade and CONNECT requests the proxy refused itself (token, target, drain).' } as const;
const BYTES = { kind: 'counter', name: 'tunnel_bytes_total', help: 'Bytes through tunnels after their handshake, by kind and direction (open tunnels included).' } as const;
const CLOSED = { kind: 'counter', name: 'tunnels_closed_total', label: 'reason', help: 'Tunnels closed, by kind and reason (client, upstream, idle, drain).' } as const;

/** One kind's block: its metrics labelled `kind`. */
function kindStats(kind: TunnelKind) {
  return declare<TunnelView>()({
    active: { ...ACTIVE, labels: { kind }, read: (v) => v.open.active(kind) },
    total: { ...TOTAL, labels: { kind }, read: (v) => v.counts[kind].total },
    refused: { ...REFUSED, labels: { kind }, read: (v) => v.counts[kind].refused },
    bytes: {
      fromClient: { ...BYTES, labels: { kind, direction: 'from_client' }, read: (v) => v.counts[kind].bytes.fromClient },
      toClient: { ...BYTES, labels: { kind, direction: 'to_client' }, read: (v) => v.counts[kind].bytes.toClient },
    },
    closed: { ...CLOSED, labels: { kind }, read: (v) => ({ ...v.counts[kind].closed }) },
  });
}

/**
 * The `/stats` `tunnels` block and its `actor_edge_proxy_tunnel…` metrics, declared once (lib/stats/declare.ts).
 * Labels are fixed sets: `kind` (upgrade, connect), `direction` (from_client, to_client), `reason` (the close reasons).
 */
export const TUNNEL_STATS = declare<TunnelView>()({
  tunnels: { upgrade: kindStats('upgrade'), connect: kindStats('connect') },
});

export type TunnelStatsBlock = StatsOf<typeof TUNNEL_STATS>['tunnels'];

export class TunnelStats implements StatsSource<TunnelView> {
  readonly tallies: Record<TunnelKind, TunnelTally> = { upgrade: new TunnelTally(), connect: new TunnelTally() };
  readonly #sinceReset: SinceReset<Record<TunnelKind, TunnelTally>>;

  constructor(private readonly open: OpenTunnels) {
    this.#sinceReset = new SinceReset(() => this.#lifetimeTallies());
  }

  /** Lifetime tallies, open tunnels' bytes included (they only grow: a tunnel's bytes move to `bytes` as it closes). */
  #lifetimeTallies(): Record<TunnelKind, TunnelTally> {
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

  lifetime(): TunnelView {
    return { counts: this.#lifetimeTallies(), open: this.open };
  }

  sinceReset(): TunnelView {
    return { counts: this.#sinceReset.current(), open: this.open };
  }

  /** Tunnels of `kind` open now. */
  active(kind: TunnelKind): number {
    return this.open.active(kind);
  }

  reset(): void {
    this.#sinceReset.reset();
  }

  snapshot(): TunnelStatsBlock {
    return statsBlock(TUNNEL_STATS, this.sinceReset()).tunnels;
  }
}
