/**
 * One binding table for every process of a `--workers N` cluster. Each process keeps its own BindingCache; this
 * module sends what the cache hears (a binding learned or renewed here, a binding evicted here through use) over a
 * channel, and applies what the other processes sent: their learns are adopted, their evictions dropped. The
 * cluster primary relays every message to the other workers (proxy/cluster/shared-table-relay.ts), so an actor is
 * resolved once for all processes and a stale binding seen by one is gone from all.
 *
 * Every event names its binding by origin (the id of the process that learned it) and that process's generation.
 * Per origin, what was evicted is remembered for one TTL (bounded like the cache): a learn arriving after the
 * eviction of the same or a newer generation of that origin is ignored, so a late learn never undoes a newer evict.
 * The cache itself stays unaware of processes and HTTP: it only sees origins and generations.
 */
import { LRUCache } from 'lru-cache';
import { clusterWorkerChannel as workerChannel, hasMessageType, type ProcessChannel } from '../../../lib/cluster-channel.js';
import { LOCAL_ORIGIN, type BindingCache, type BindingEvent, type Origin } from './binding-cache.js';
import { SinceReset } from '../../../lib/since-reset.js';
import { cacheTallies } from './counters.js';

/** The IPC message type (worker → primary → every other worker). */
export const BINDING_MESSAGE = 'actor-edge:binding';

/** One binding event on the wire: `origin` is always a process id there, never LOCAL_ORIGIN. */
export interface BindingMessage {
  readonly type: typeof BINDING_MESSAGE;
  readonly event: BindingEvent;
}

export function isBindingMessage(m: unknown): m is BindingMessage {
  return hasMessageType(m, BINDING_MESSAGE);
}

/** How a process reaches the others: its own id (> 0), a send, and a subscription (returns its undo). */
export type BindingChannel = ProcessChannel<BindingMessage>;

export type SharedCount = 'sent' | 'received' | 'adopted' | 'dropped' | 'ignored';

export class SharedBindings {
  readonly #cache: BindingCache;
  readonly #channel: BindingChannel;
  /** `origin key` → the newest generation of that origin evicted for `key`. */
  readonly #evicted: LRUCache<string, number>;
  /** Events by what became of them: the `cache.shared` tallies of `CACHE_ON_STATS`. */
  readonly #tallies: Record<SharedCount, number> = cacheTallies().shared;
  readonly #sinceReset = new SinceReset(() => this.#tallies);
  readonly #unsubscribe: () => void;

  constructor(cache: BindingCache, channel: BindingChannel) {
    if (!(channel.self > 0)) throw new RangeError('a shared binding table needs a process id > 0');
    this.#cache = cache;
    this.#channel = channel;
    this.#evicted = new LRUCache<string, number>({ max: cache.maxEntries, ttl: Math.max(1, cache.ttlMs), ttlResolution: 0 });
    cache.subscribe((event) => this.#publish(event));
    this.#unsubscribe = channel.onMessage((m) => this.#apply(m.event));
  }

  #publish(event: BindingEvent): void {
    const origin = event.origin === LOCAL_ORIGIN ? this.#channel.self : event.origin;
    if (event.kind === 'evicted') this.#remember(origin, event.key, event.originGeneration);
    this.#channel.send({ type: BINDING_MESSAGE, event: { ...event, origin } });
    this.#tallies.sent++;
  }

  #apply(event: BindingEvent): void {
    this.#tallies.received++;
    const origin = event.origin === this.#channel.self ? LOCAL_ORIGIN : event.origin;
    const mark = `${event.origin} ${event.key}`;
    let applied: boolean;
    if (event.kind === 'learned') {
      const evicted = this.#evicted.get(mark);
      applied = (evicted === undefined || evicted < event.originGeneration) && this.#cache.adopt(event.key, event.address, origin, event.originGeneration, event.ttlLeftMs);
      this.#tallies[applied ? 'adopted' : 'ignored']++;
    } else {
      this.#remember(event.origin, event.key, event.originGeneration);
      applied = this.#cache.drop(event.key, origin, event.originGeneration);
      this.#tallies[applied ? 'dropped' : 'ignored']++;
    }
  }

  #remember(origin: Origin, key: string, generation: number): void {
    const mark = `${origin} ${key}`;
    const before = this.#evicted.get(mark);
    if (before === undefined || before < generation) this.#evicted.set(mark, generation);
  }

  /** Counters since the last reset (the `/stats` `cache.shared` block). */
  stats(): Record<SharedCount, number> {
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

/** The node:cluster channel of a proxy worker (undefined in a process that is not a cluster worker). */
export function clusterWorkerChannel(): BindingChannel | undefined {
  return workerChannel(isBindingMessage);
}
