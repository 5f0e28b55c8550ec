/**
 * The one containment boundary. Every place where a component starts work on something a peer sent — a request, a
 * stream, a handshake, a tunnel's bytes, an upstream answer, a gRPC message, an admin call — runs that work through
 * `run` (or registers its callbacks through `wrap`), naming where it is (`where`) and who owns the work (`owner`:
 * the request, stream or tunnel that ends if it throws). A throw there, synchronous or a rejection of the promise
 * the work returned, ends that owner alone (`owner.fail`: a 500 with the request id when nothing was sent yet, a
 * reset otherwise), is logged once with its stack and request id, and is counted by `where`. Nothing else carries
 * on past an error: the process installs no `uncaughtException` handler, so a throw outside every boundary still
 * ends the process (and `--workers N` replaces it).
 */
import type { Logger } from 'pino';

/** Who ends when contained work throws. */
export interface ContainedOwner {
  /** The request id the log line carries, when the owner has one by then. */
  readonly requestId?: string | undefined;
  /** Ends this piece of work alone (answers 500, resets, closes the tunnel). Called at most once per error. */
  fail(err: unknown): void;
}

/** An owner, or a function that finds it when the error happens (the request may have its context by then). */
export type OwnerRef = ContainedOwner | (() => ContainedOwner | undefined);

export interface ContainmentDeps<W extends string> {
  readonly log: Logger;
  /** Counts one contained error at `where` (`…_internal_errors_total{where}`). */
  readonly count: (where: W) => void;
}

/** Errors already logged and counted (an error rethrown through two boundaries is one error). */
const SEEN = new WeakSet<object>();

export class Containment<W extends string> {
  readonly #deps: ContainmentDeps<W>;

  constructor(deps: ContainmentDeps<W>) {
    this.#deps = deps;
  }

  /** Runs `work` inside the boundary; a throw or a rejection of the promise it returns ends `owner` alone. */
  run(where: W, owner: OwnerRef | undefined, work: () => unknown): void {
    let result: unknown;
    try {
      result = work();
    } catch (err) {
      this.caught(where, owner, err);
      return;
    }
    if (isThenable(result)) result.then(undefined, (err: unknown) => this.caught(where, owner, err));
  }

  /** `fn` as a callback that runs inside the boundary (for the events and timers the contained work registers). */
  wrap<A extends unknown[]>(where: W, owner: OwnerRef | undefined, fn: (...args: A) => unknown): (...args: A) => void {
    return (...args: A) => this.run(where, owner, () => fn(...args));
  }

  /** An error the boundary caught (or a component caught in a way of its own): logged once, counted, its owner ended. */
  caught(where: W, ref: OwnerRef | undefined, err: unknown): void {
    let owner: ContainedOwner | undefined;
    try {
      owner = typeof ref === 'function' ? ref() : ref;
    } catch {
      owner = undefined;
    }
    const first = !(typeof err === 'object' && err !== null && SEEN.has(err));
    if (first) {
      if (typeof err === 'object' && err !== null) SEEN.add(err);
      this.#deps.count(where);
      this.#deps.log.error({ err, where, requestId: owner?.requestId }, 'internal error: contained, ending this work alone');
    }
    if (owner === undefined) return;
    try {
      owner.fail(err);
    } catch (failure) {
      // Ending the owner failed too: what is left of it is the owner's to clean up when its connection closes.
      this.#deps.log.error({ err: failure, where, requestId: owner.requestId }, 'internal error: the contained work could not be ended cleanly');
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
