/**
 * TLS material that follows its files: loaded once at start (an error then is fatal and names the file), then
 * re-loaded whenever one of the files changes (polled with fs.watchFile, which also follows a symlink swap or a
 * rename into place). A re-load that fails keeps the material it had and reports the error; new connections use
 * whatever `current` is when they are made, connections already open are left alone.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';

export interface WatchedOptions<T> {
  readonly paths: readonly string[];
  /** Reads and checks every file; throws on anything unusable. */
  readonly load: () => T;
  /** How often the files are polled (ms). */
  readonly intervalMs: number;
  readonly onReload?: (value: T) => void;
  readonly onError?: (err: Error) => void;
}

export const DEFAULT_WATCH_INTERVAL_MS = 1000;

export class WatchedTlsFiles<T> {
  #current: T;
  #reloads = 0;
  #errors = 0;
  readonly #listener: (curr: Stats, prev: Stats) => void;

  constructor(private readonly opts: WatchedOptions<T>) {
    this.#current = opts.load();
    this.#listener = (curr, prev) => {
      if (curr.mtimeMs !== prev.mtimeMs || curr.ino !== prev.ino || curr.size !== prev.size) this.reload();
    };
    for (const path of new Set(opts.paths)) watchFile(path, { interval: opts.intervalMs, persistent: false }, this.#listener);
  }

  get current(): T {
    return this.#current;
  }

  /** Successful re-loads and failed ones since start. */
  get counts(): { readonly reloads: number; readonly errors: number } {
    return { reloads: this.#reloads, errors: this.#errors };
  }

  /** Loads the files now; true when the new material is in use. */
  reload(): boolean {
    let next: T;
    try {
      next = this.opts.load();
    } catch (err) {
      this.#errors++;
      this.opts.onError?.(err as Error);
      return false;
    }
    this.#current = next;
    this.#reloads++;
    this.opts.onReload?.(next);
    return true;
  }

  close(): void {
    for (const path of new Set(this.opts.paths)) unwatchFile(path, this.#listener);
  }
}
