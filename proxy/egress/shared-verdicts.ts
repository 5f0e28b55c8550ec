/**
 * One egress verdict table for every process of a `--workers N` cluster, as the actor bindings are
 * (proxy/stages/actor-cache/shared-bindings.ts). Each process keeps its own EgressVerdictCache; this module sends
 * what the cache hears (a verdict stored here, an admin eviction made here) over a channel, and applies what the
 * other processes sent: their verdicts are adopted, their evictions applied. The cluster primary relays every
 * message to the other workers (proxy/cluster/shared-table-relay.ts), so a destination is decided once for all
 * processes and an eviction made in one is made in all.
 *
 * Every verdict is named by its origin (the id of the process that stored it) and that process's generation. An
 * eviction names a filter and, per origin, the newest generation the evicting process had heard of (`upTo`): the
 * others remove the matching verdicts up to those generations, so what the evicting process could not have seen
 * (a verdict stored meanwhile elsewhere) survives in every process alike. Evictions are remembered for one TTL
 * (bounded): a store arriving after an eviction that covers it is ignored, so a late store never undoes a newer
 * eviction.
 *
 * The open tunnels react too (`hooks`): a verdict adopted from another process reaches this process's grants as a
 * fresher verdict for its key (a denial closes the tunnels it granted), and an eviction that says `closes` (a revoke,
 * an actor found not running or unknown) closes the tunnels it matches here as it did where it was made.
 */
import { hasMessageType, type ProcessChannel } from '../../lib/cluster-channel.js';
import { SinceReset } from '../../lib/since-reset.js';
import { egressCacheTallies, type SharedVerdictCount } from './egress-cache-counters.js';
import { LOCAL_ORIGIN, matchesFilter, type CachedVerdict, type EgressKey, type EgressVerdict, type EgressVerdictCache, type EvictionCloses, type VerdictEvent, type VerdictFilter } from './verdict-cache.js';

/** The IPC message type (worker → primary → every other worker). */
export const EGRESS_VERDICT_MESSAGE = 'actor-edge:egress-verdict';

/** One event on the wire: `origin` is always a process id there (> 0). */
export type SharedVerdictEvent =
  | {
      readonly kind: 'stored';
      readonly key: EgressKey;
      readonly verdict: EgressVerdict;
      readonly origin: number;
      readonly generation: number;
      /** Wall-clock milliseconds (the processes of one cluster share the machine's clock). */
      readonly expiresAtMs: number;
    }
  | {
      readonly kind: 'evicted';
      readonly filter: VerdictFilter;
      readonly origin: number;
      /** Per origin, the newest generation the evicting process had heard of: `[origin, generation]` pairs. */
      readonly upTo: readonly (readonly [number, number])[];
      /** Present: the tunnels the filter matches are closed too, for this reason. */
      readonly closes?: EvictionCloses;
    };

export interface EgressVerdictMessage {
  readonly type: typeof EGRESS_VERDICT_MESSAGE;
  readonly event: SharedVerdictEvent;
}

export function isEgressVerdictMessage(m: unknown): m is EgressVerdictMessage {
  return hasMessageType(m, EGRESS_VERDICT_MESSAGE);
}

export type VerdictChannel = ProcessChannel<EgressVerdictMessage>;

/**
 * Messages sent and received; of the received stores, those adopted and those ignored (older than what is held,
 * expired, or covered by an eviction heard before them); of the received evictions, how many were applied and how
 * many verdicts they removed.
 */
export type { SharedVerdictCount } from './egress-cache-counters.js';

/** At most this many evictions are remembered against late stores (an admin does not evict thousands per TTL). */
export const REMEMBERED_EVICTIONS = 1024;

interface RememberedEviction {
  readonly filter: VerdictFilter;
  readonly upTo: ReadonlyMap<number, number>;
  /** Cache clock time after which no store it covers can still be live. */
  readonly until: number;
}

/** What the open tunnels of this process hear from the others (`grant-signals.ts`). */
export interface SharedVerdictHooks {
  /** A verdict another process stored was adopted here (it is now the key's entry). */
  adopted(key: EgressKey, entry: CachedVerdict): void;
  /** Another process evicted `filter` and said its tunnels close, for `reason`. */
  revoked(filter: VerdictFilter, reason: EvictionCloses): void;
}

const CLOSES: ReadonlySet<string> = new Set<EvictionCloses>(['revoked-admin', 'revoked-not-running', 'revoked-unknown']);

function isVerdict(v: unknown): v is EgressVerdict {
  const kind = (v as { kind?: unknown } | null)?.kind;
  return kind === 'allow' || kind === 'hostnames' || kind === 'deny';
}

export class SharedVerdicts {
  readonly #cache: EgressVerdictCache;
  readonly #channel: VerdictChannel;
  /** Process id → the newest generation heard from it (one per process of the cluster). */
  readonly #heard = new Map<number, number>();
  readonly #evictions: RememberedEviction[] = [];
  /** The `egress.cache.shared` tallies of `EGRESS_CACHE_STATS`. */
  readonly #counters: Record<SharedVerdictCount, number> = egressCacheTallies().shared;
  readonly #sinceReset = new SinceReset(() => this.#counters);
  readonly #unsubscribe: () => void;
  readonly #hooks: SharedVerdictHooks | undefined;

  constructor(cache: EgressVerdictCache, channel: VerdictChannel, hooks?: SharedVerdictHooks) {
    if (!(channel.self > 0)) throw new RangeError('a shared verdict table needs a process id > 0');
    this.#cache = cache;
    this.#channel = channel;
    this.#hooks = hooks;
    cache.subscribe((event) => this.#publish(event));
    this.#unsubscribe = channel.onMessage((m) => this.#apply(m.event));
  }

  #publish(event: VerdictEvent): void {
    const origin = this.#channel.self;
    let wire: SharedVerdictEvent;
    if (event.kind === 'stored') {
      wire = { ...event, origin };
    } else {
      const upTo: [number, number][] = [[origin, this.#cache.latestGeneration], ...this.#heard];
      this.#remember(event.filter, new Map(upTo));
      wire = { kind: 'evicted', filter: event.filter, origin, upTo, ...(event.closes === undefined ? {} : { closes: event.closes }) };
    }
    this.#channel.send({ type: EGRESS_VERDICT_MESSAGE, event: wire });
    this.#counters.sent++;
  }

  #apply(event: SharedVerdictEvent): void {
    this.#counters.received++;
    if (event.origin === this.#channel.self) return; // a relay never echoes; nothing to learn from oneself
    if (event.kind === 'stored') {
      if (event.generation > (this.#heard.get(event.origin) ?? 0)) this.#heard.set(event.origin, event.generation);
      const adopted =
        isVerdict(event.verdict) && !this.#covered(event.key, event.origin, event.generation)
          ? this.#cache.adoptEntry(event.key, event.verdict, event.origin, event.generation, event.expiresAtMs)
          : undefined;
      this.#counters[adopted !== undefined ? 'adopted' : 'ignored']++;
      if (adopted !== undefined) this.#hooks?.adopted(event.key, adopted);
      return;
    }
    const upTo = new Map(event.upTo);
    this.#remember(event.filter, upTo);
    const covers = (origin: number, generation: number): boolean => generation <= (upTo.get(origin === LOCAL_ORIGIN ? this.#channel.self : origin) ?? 0);
    const dropped = this.#cache.drop(event.filter, covers);
    this.#counters.evictions++;
    this.#counters.dropped += dropped;
    if (event.closes !== undefined && CLOSES.has(event.closes)) this.#hooks?.revoked(event.filter, event.closes);
  }

  /** Whether an eviction heard before covers a store of `origin`'s `generation` for `key`. */
  #covered(key: EgressKey, origin: number, generation: number): boolean {
    this.#forgetOld();
    return this.#evictions.some((e) => generation <= (e.upTo.get(origin) ?? 0) && matchesFilter(e.filter, key));
  }

  #remember(filter: VerdictFilter, upTo: ReadonlyMap<number, number>): void {
    this.#forgetOld();
    if (this.#evictions.length >= REMEMBERED_EVICTIONS) this.#evictions.shift();
    // A store an eviction covers was made before it, so it expires at most one TTL after the eviction is heard.
    this.#evictions.push({ filter, upTo, until: this.#cache.now() + this.#cache.ttlMs });
  }

  #forgetOld(): void {
    const now = this.#cache.now();
    while (this.#evictions.length > 0 && (this.#evictions[0] as RememberedEviction).until <= now) this.#evictions.shift();
  }

  /** Counters since the last reset (the `/stats` `egress.cache.shared` block). */
  stats(): Record<SharedVerdictCount, number> {
    return this.#sinceReset.current();
  }

  resetStats(): void {
    this.#sinceReset.reset();
  }

  close(): void {
    this.#cache.subscribe(undefined);
    this.#unsubscribe();
  }
}
