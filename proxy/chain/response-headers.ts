/**
 * A response head's headers as a filter's `onResponse` sees them: node's flat `[name, value, ...]` list (upstream
 * names keep their case; lookups ignore it) behind the public `HeaderMap`. Copy-on-write, like the request's
 * headers: a response no filter changes is written from the list it came with.
 *
 * Changes are checked as the proxy checks every header it forwards: a valid name and value, never a hop-by-hop
 * header (`edge/hop-by-hop.ts`), never `content-length` (the body is framed by it), never one of the wire
 * contract's internal headers (the stale signal among them).
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { HeaderMap } from '../api/filter.js';
import { HOP_BY_HOP, removeNamed } from '../edge/hop-by-hop.js';
import { INTERNAL_HEADERS } from '../../lib/wire-contract.js';

const REFUSED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...INTERNAL_HEADERS, 'content-length']);

export class ResponseHeaders implements HeaderMap {
  #list: string[];
  #copied = false;

  constructor(list: string[]) {
    this.#list = list;
  }

  /** The list to write (do not modify). */
  get list(): string[] {
    return this.#list;
  }

  get(name: string): string | undefined {
    const n = name.toLowerCase();
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) if ((l[i] as string).toLowerCase() === n) return l[i + 1];
    return undefined;
  }

  getAll(name: string): readonly string[] {
    const n = name.toLowerCase();
    const l = this.#list;
    const out: string[] = [];
    for (let i = 0; i < l.length; i += 2) if ((l[i] as string).toLowerCase() === n) out.push(l[i + 1] as string);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, value: string): void {
    const n = checked(name, value);
    this.#remove(n);
    this.#writable().push(n, value);
  }

  append(name: string, value: string): void {
    this.#writable().push(checked(name, value), value);
  }

  delete(name: string): void {
    const n = name.toLowerCase();
    if (n === 'content-length') throw new TypeError('response header "content-length" cannot be removed by a filter');
    this.#remove(n);
  }

  *entries(): IterableIterator<[string, string]> {
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) yield [(l[i] as string).toLowerCase(), l[i + 1] as string];
  }

  #remove(lower: string): void {
    if (this.has(lower)) removeNamed(this.#writable(), new Set([lower]));
  }

  #writable(): string[] {
    if (!this.#copied) {
      this.#list = this.#list.slice();
      this.#copied = true;
    }
    return this.#list;
  }
}

function checked(name: string, value: string): string {
  const n = String(name).toLowerCase();
  validateHeaderName(n);
  validateHeaderValue(n, value);
  if (REFUSED.has(n)) throw new TypeError(`response header "${n}" cannot be set by a filter`);
  return n;
}
