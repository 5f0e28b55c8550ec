/**
 * Counters for long-lived connections: upgraded connections (WebSocket) and CONNECT tunnels, declared once
 * (`TUNNEL_STATS`: the `/stats` `tunnels` block, its metrics and the tallies' storage, `TunnelStats.tallies`). Plain
 * numbers bumped when a tunnel opens, is refused or closes (a new counter is its declaration and its `++`); bytes of the tunnels still open are added when read, so `/stats` and
 * `/metrics` see traffic before a tunnel closes. `/stats` reports them since the last reset (lib/since-reset.ts),
 * except `active`, which is the number open now.
 */
import { SinceReset } from '../../lib/since-reset.js';
import { declare, talliesOf, type StatsOf, type TalliesOf } from '../../lib/stats/declare.js';
import { statsBlock, type StatsSource } from '../../lib/stats/derive.js';

export type TunnelKind = 'upgrade' | 'connect';
export const TUNNEL_KINDS: readonly TunnelKind[] = ['upgrade', 'connect'];

/**
 * Why a tunnel closed: `client` / `upstream` (that side closed or failed first), `idle` (`--tunnel-idle-timeout-ms`),
 * `drain` (still open when the drain timeout ran out).
 */
export const CLOSE_REASONS = Object.freeze(['client', 'upstream', 'idle', 'drain', 'internal'] as const);
export type TunnelCloseReason = (typeof CLOSE_REASONS)[number];

/** Bytes through a tunnel: `fromClient` (client → proxy), `toClient` (proxy → client). */
export interface TunnelBytes {
  fromClient: number;
  toClient: number;
}

/** What the stats read from the open tunnels. */
export interface OpenTunnels {
  active(kind: TunnelKind): number;
  /** Bytes so far of the tunnels of `kind` still open. */
  openBytes(kind: TunnelKind): TunnelBytes;
}

/**
 * What the declarations read: the tallies as `{ tunnels: { upgrade, connect } }` (since the last reset for
 * `/stats`, lifetime for `/metrics`, open tunnels' bytes included) and the open tunnels.
 */
export interface TunnelView {
  readonly tallies: object;
  readonly open: OpenTunnels;
}

const ACTIVE = { kind: 'gauge', name: 'tunnels_active', help: 'Upgraded connections (kind=upgrade) and CONNECT tunnels (kind=connect) open now.' } as const;
const TOTAL = { kind: 'tally', name: 'tunnels_total', help: 'Upgraded connections and CONNECT tunnels opened.' } as const;
const REFUSED = { kind: 'tally', name: 'tunnels_refused_total', help: 'Upgrade and CONNECT requests the proxy refused itself (token, target, drain).' } as const;
const BYTES = { kind: 'tally', name: 'tunnel_bytes_total', help: 'Bytes through tunnels after their handshake, by kind and direction (open tunnels included).' } as const;
const CLOSED = { kind: 'tally', name: 'tunnels_closed_total', label: 'reason', keys: CLOSE_REASONS, help: 'Tunnels closed, by kind and reason (client, upstream, idle, drain).' } as const;

/** One kind's block: its metrics labelled `kind`. */
function kindStats(kind: TunnelKind) {
  return declare<TunnelView>()({
    active: { ...ACTIVE, labels: { kind }, read: (v) => v.open.active(kind) },
    total: { ...TOTAL, labels: { kind } },
    refused: { ...REFUSED, labels: { kind } },
    bytes: {
      fromClient: { ...BYTES, labels: { kind, direction: 'from_client' } },
      toClient: { ...BYTES, labels: { kind, direction: 'to_client' } },
    },
    closed: { ...CLOSED, labels: { kind } },
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

/** The tallies of `TUNNEL_STATS` by kind: opened, refused, bytes of closed tunnels, closed by reason. */
export type TunnelTallies = TalliesOf<typeof TUNNEL_STATS>['tunnels'];

/** One kind's tallies (`total`, `refused`, `bytes.fromClient`, `closed.idle` …). */
export type TunnelTally = TunnelTallies[TunnelKind];

export class TunnelStats implements StatsSource<TunnelView> {
  readonly tallies: TunnelTallies = talliesOf(TUNNEL_STATS).tunnels;
  readonly #sinceReset: SinceReset<TunnelTallies>;

  constructor(private readonly open: OpenTunnels) {
    this.#sinceReset = new SinceReset(() => this.#lifetimeTallies());
  }

  /** Lifetime tallies, open tunnels' bytes included (they only grow: a tunnel's bytes move to `bytes` as it closes). */
  #lifetimeTallies(): TunnelTallies {
    const out = { ...this.tallies };
    for (const kind of TUNNEL_KINDS) {
      const t = this.tallies[kind];
      const live = this.open.openBytes(kind);
      out[kind] = { ...t, bytes: { fromClient: t.bytes.fromClient + live.fromClient, toClient: t.bytes.toClient + live.toClient } };
    }
    return out;
  }

  lifetime(): TunnelView {
    return { tallies: { tunnels: this.#lifetimeTallies() }, open: this.open };
  }

  sinceReset(): TunnelView {
    return { tallies: { tunnels: this.#sinceReset.current() }, open: this.open };
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
