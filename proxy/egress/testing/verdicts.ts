/** Keys, verdicts and a clock for the egress cache's tests. */
import type { EgressKey, EgressVerdict } from '../verdict-cache.js';

/** A certificate digest made of one repeated hex digit. */
export const digest = (c: string): string => c.repeat(64);

export function egressKey(certDigest: string, destination = '127.0.0.1:9000', actor = { atespace: 'demo', name: 'a' }): EgressKey {
  return { certDigest, destination, actor };
}

export const ALLOW: EgressVerdict = Object.freeze({ kind: 'allow', actorId: 'uid-a', atespace: 'demo', name: 'a', rule: 0 });
export const DENY: EgressVerdict = Object.freeze({ kind: 'deny', status: 403, body: 'egress denied', outcome: 'denied' });
export const UNAVAILABLE: EgressVerdict = Object.freeze({ kind: 'deny', status: 503, body: 'control plane unavailable', outcome: 'unavailable' });

/** A clock that moves only when told (wall-clock-like milliseconds). */
export function fakeClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** A promise with its settlers, for a slow path the test answers when it chooses. */
export function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
