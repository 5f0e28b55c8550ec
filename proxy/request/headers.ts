/**
 * Request headers as the proxy forwards them: a flat `[name, value, name, value, ...]` list with lower-case
 * names (the shape undici's dispatch takes as is), behind the public `HeaderMap` interface.
 *
 * Copy-on-write: the list starts as the sanitised ingress headers and is copied only when a filter first changes
 * it, so a request nobody modifies allocates nothing here. `reset()` returns to the ingress headers: a re-run
 * starts from the original forwarded headers, not from the previous attempt's changes.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { HeaderMap } from '../api/filter.js';

export class ForwardHeaders implements HeaderMap {
  readonly #original: readonly string[];
  #list: string[];
  #copied = false;

  constructor(list: string[]) {
    this.#original = list;
    this.#list = list;
  }

  /** The list to send upstream (do not modify). */
  get list(): readonly string[] {
    return this.#list;
  }

  /** Back to the ingress headers (before a re-run). */
  reset(): void {
    this.#list = this.#original as string[];
    this.#copied = false;
  }

  get(name: string): string | undefined {
    const n = name.toLowerCase();
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) if (l[i] === n) return l[i + 1];
    return undefined;
  }

  getAll(name: string): readonly string[] {
    const n = name.toLowerCase();
    const l = this.#list;
    const out: string[] = [];
    for (let i = 0; i < l.length; i += 2) if (l[i] === n) out.push(l[i + 1] as string);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, value: string): void {
    this.setTrusted(checked(name, value), value);
  }

  /**
   * `set` for the proxy's own headers: `name` must already be a lower-case, valid header name and `value` a valid
   * value (no validation here).
   */
  setTrusted(name: string, value: string): void {
    const l = this.#writable();
    let at = -1;
    for (let i = 0; i < l.length; i += 2) {
      if (l[i] !== name) continue;
      if (at === -1) {
        at = i;
        l[i + 1] = value;
      } else {
        l.splice(i, 2);
        i -= 2;
      }
    }
    if (at === -1) l.push(name, value);
  }

  append(name: string, value: string): void {
    const n = checked(name, value);
    this.#writable().push(n, value);
  }

  delete(name: string): void {
    const n = name.toLowerCase();
    if (this.get(n) === undefined) return;
    const l = this.#writable();
    for (let i = 0; i < l.length; i += 2) {
      if (l[i] === n) {
        l.splice(i, 2);
        i -= 2;
      }
    }
  }

  *entries(): IterableIterator<[string, string]> {
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) yield [l[i] as string, l[i + 1] as string];
  }

  #writable(): string[] {
    if (!this.#copied) {
      this.#list = this.#original.slice();
      this.#copied = true;
    }
    return this.#list;
  }
}

function checked(name: string, value: string): string {
  const n = name.toLowerCase();
  validateHeaderName(n);
  validateHeaderValue(n, value);
  return n;
}
