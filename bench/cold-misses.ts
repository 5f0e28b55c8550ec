/**
 * Requests for cold actors, for the faults scenario's outage phases: an open loop (a steady rate, whatever the
 * answers take, so an outage cannot slow it down and hide its misses) of POSTs — unique `x-request-id`s, as the
 * main load — each for the next actor of a pool of suspended actors, round robin. Each request is a cache miss
 * that needs ext_proc and a `ResumeActor` that wakes the actor; once it is answered the actor is suspended again
 * (through the stub's admin API), so it is cold the next time round and its worker slot is free. The pool is large
 * enough that an actor comes round again only after the cache TTL, so its binding is gone by then.
 */
import { request } from 'undici';
import type { Admin } from './admin.js';

export interface ColdMissesOptions {
  /** The proxy's ingress (`http://host:port`). */
  readonly url: string;
  readonly stubAdmin: Admin;
  readonly atespace: string;
  /** The cold actors' names and Hosts. */
  readonly actors: readonly { readonly name: string; readonly host: string }[];
  readonly perSecond: number;
  /** Requests of the loop in flight at once, at most (one more waits for a free place). */
  readonly maxInFlight: number;
  readonly idPrefix: string;
  readonly onResponse: (status: number) => void;
  readonly onError: () => void;
}

export interface ColdMisses {
  /** Requests sent so far. */
  readonly sent: number;
  /** Stops sending; resolves when every request sent has been answered (and its actor suspended). */
  stop(): Promise<void>;
}

export function startColdMisses(opts: ColdMissesOptions): ColdMisses {
  if (opts.actors.length === 0) throw new Error('cold misses: no cold actors');
  let next = 0;
  let sent = 0;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();

  const one = async (i: number): Promise<void> => {
    const actor = opts.actors[i % opts.actors.length] as { name: string; host: string };
    const id = `${opts.idPrefix}-${i}`;
    try {
      const res = await request(`${opts.url}/orders`, {
        method: 'POST',
        headers: { host: actor.host, 'content-type': 'application/json', 'x-request-id': id },
        body: JSON.stringify({ id, item: 'cold', quantity: 1 }),
        headersTimeout: 60_000,
      });
      await res.body.dump();
      opts.onResponse(res.statusCode);
    } catch {
      opts.onError();
    }
    // Cold again for its next turn (a suspend of an actor that never woke is a no-op).
    await opts.stubAdmin.post(`/actors/${encodeURIComponent(opts.atespace)}/${encodeURIComponent(actor.name)}/suspend`).catch(() => undefined);
  };

  const timer = setInterval(() => {
    if (stopped || inFlight.size >= opts.maxInFlight) return;
    sent++;
    const p = one(next++).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / opts.perSecond);

  return {
    get sent() {
      return sent;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
