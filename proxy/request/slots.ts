/**
 * Per-request slots: a part of the proxy that keeps state for one request (a built-in stage, the chain) declares
 * its own slot, typed, once at load time, instead of the request naming every part's state (Pingora's per-request
 * CTX, without the core knowing what is in it). A slot is an index into the request's `slots` array, so reading
 * one costs an array load. User filters keep their state in `ctx.locals` instead.
 */

let declared = 0;

/** Anything that carries slots (the proxy's request context). */
export interface HasSlots {
  readonly slots: unknown[];
}

export class RequestSlot<T> {
  readonly #index: number;

  /** `owner`: who keeps its state here (for debugging). */
  constructor(readonly owner: string) {
    this.#index = declared++;
  }

  /** How many slots exist (the size a request's `slots` array is made with). */
  static get count(): number {
    return declared;
  }

  get(ctx: HasSlots): T | undefined {
    return ctx.slots[this.#index] as T | undefined;
  }

  set(ctx: HasSlots, value: T): T {
    ctx.slots[this.#index] = value;
    return value;
  }

  clear(ctx: HasSlots): void {
    ctx.slots[this.#index] = undefined;
  }
}
