/**
 * Collects the young generation after every so many bytes of request bodies have passed through (`GcPacer`).
 *
 * Why: a body chunk is a Buffer whose bytes live outside the V8 heap; its JS object is about a hundred bytes. The
 * young-generation collector runs when the heap's young space fills, which request bodies barely move: a proxy
 * forwarding uploads at a few hundred MB a second allocates only a few MB a second of heap, so chunks long
 * forwarded and dropped wait seconds for a collection, and their bytes with them (measured in the overload
 * bench's 1,000 concurrent 1 MiB uploads: up to 340 MB of ArrayBuffers, of which about 65 MB live; bench/README
 * "Overload"). V8 also starts collections for external memory, but on its own schedule, which let those hundreds
 * of MB accumulate. A minor collection costs about a millisecond with the proxy's heap; one per
 * `everyBytes` bounds the dead chunks waiting for it (about twice `everyBytes`: V8 frees a collected
 * ArrayBuffer's bytes by the next collection at the latest), whatever the upload rate.
 *
 * The collector is reached without exposing `gc` on the process's global object: `--expose-gc` is set, then the
 * function is taken from a fresh context (`vm`), so no filter or library sees a global `gc`.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

type GcFunction = (options?: { type?: 'minor' | 'major' }) => void;

let minorGc: (() => void) | undefined;

/** The young-generation collection, made reachable on first use; undefined where V8 does not offer it. */
function collector(): (() => void) | undefined {
  if (minorGc !== undefined) return minorGc;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    if (typeof gc !== 'function') return undefined;
    minorGc = () => (gc as GcFunction)({ type: 'minor' });
  } catch {
    return undefined;
  }
  return minorGc;
}

export class GcPacer {
  readonly #every: number;
  readonly #collect: (() => void) | undefined;
  #since = 0;
  /** Collections this pacer asked for. */
  collections = 0;

  /** `everyBytes`: 0 turns the pacer off. `collect`: the collection (tests); default V8's young-generation one. */
  constructor(everyBytes: number, collect?: () => void) {
    if (!(everyBytes >= 0)) throw new RangeError('the GC pacer needs 0 or more bytes');
    this.#every = everyBytes;
    this.#collect = everyBytes === 0 ? undefined : (collect ?? collector());
  }

  /** `bytes` of body passed through; collects when `everyBytes` have since the last collection. */
  add(bytes: number): void {
    if (this.#collect === undefined) return;
    this.#since += bytes;
    if (this.#since < this.#every) return;
    this.#since = 0;
    this.collections++;
    this.#collect();
  }
}
