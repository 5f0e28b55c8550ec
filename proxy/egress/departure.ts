/**
 * An actor going away before its CONNECT is answered: a flag and the callbacks waiting on it. Every CONNECT has one;
 * an AbortSignal is made from it only when something needs one (the slow path's ext_proc stream), because making an
 * AbortSignal and listening on it costs a few per cent of a cached tunnel's CPU.
 */
/** What the CONNECT's handler sees of it: it watches the departure, only the request's own protocol decides it. */
export interface DepartureWatch {
  readonly left: boolean;
  onLeave(fn: () => void): () => void;
  readonly signal: AbortSignal;
}

export class Departure implements DepartureWatch {
  #left = false;
  #waiting: (() => void)[] | undefined;
  #controller: AbortController | undefined;

  /** True once the actor left. */
  get left(): boolean {
    return this.#left;
  }

  /** The actor left: every callback waiting is called once, in order, and the signal (if made) aborts. */
  leave(): void {
    if (this.#left) return;
    this.#left = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    this.#controller?.abort();
    for (const fn of waiting ?? []) fn();
  }

  /** Calls `fn` once when the actor leaves (at once when it already has); the function returned stops the wait. */
  onLeave(fn: () => void): () => void {
    if (this.#left) {
      fn();
      return () => undefined;
    }
    (this.#waiting ??= []).push(fn);
    return () => {
      const waiting = this.#waiting;
      const at = waiting?.indexOf(fn) ?? -1;
      if (waiting !== undefined && at >= 0) waiting.splice(at, 1);
    };
  }

  /** The same as an AbortSignal (made on first use), for APIs that take one. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#left) this.#controller.abort();
    }
    return this.#controller.signal;
  }
}
