/**
 * Headers as the proxy forwards and relays them: node's flat `[name, value, name, value, ...]` list (the shape
 * undici's dispatch and node's `writeHead` take as they are) behind the public `HeaderMap` interface, one
 * copy-on-write implementation for both directions:
 *
 * - `ForwardHeaders`, a request's headers as forwarded upstream: names lower case (the ingress lowered them);
 *   `reset()` returns to the ingress headers (a re-run starts from the original forwarded headers, not from the
 *   previous attempt's changes). `host` cannot be changed by a filter: the request's authority — which the cache,
 *   ext_proc and the worker all key on — is decided once at the ingress.
 * - `ResponseHeaders`, a response head as a filter's `onResponse` sees it: upstream names keep their case (lookups
 *   ignore it); a filter can never set a hop-by-hop header (`hop-by-hop.ts`), `content-length` (the body is framed
 *   by it) or one of the wire contract's internal headers (the stale signal among them).
 *
 * The list is copied only when first changed, so a request or response nobody modifies allocates nothing here.
 * A request's headers go further: a header added under a new name (the cache's `x-ate-target-port` on every hit)
 * is appended to the ingress list itself, which `reset()` cuts back to its ingress length, so the hit path copies
 * nothing either. A response's list is always copied on change: the chain tells a changed head by its identity.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { HeaderMap } from '../api/filter.js';
import { INTERNAL_HEADERS } from '../../lib/wire-contract.js';
import { HOP_BY_HOP } from './hop-by-hop.js';

abstract class CopyOnWriteHeaders implements HeaderMap {
  readonly #original: string[];
  /** How long the original list was (what `restore` cuts it back to after in-place appends). */
  readonly #originalLength: number;
  #list: string[];
  #copied = false;

  constructor(
    list: string[],
    /** Every name in `list` is lower case already (compare without lowering). */
    private readonly lowerCase: boolean,
    /** New names may be appended to `list` itself before it is copied (`restore` cuts them off again). */
    private readonly appendInPlace: boolean,
  ) {
    this.#original = list;
    this.#originalLength = list.length;
    this.#list = list;
  }

  /** The list to send (do not modify). */
  get list(): string[] {
    return this.#list;
  }

  /** Throws a TypeError when a filter may not change `name` (lower case) this way. */
  protected abstract refuse(name: string, op: 'set' | 'delete'): void;

  #at(name: string, i: number): boolean {
    const n = this.#list[i] as string;
    return this.lowerCase ? n === name : n.length === name.length && n.toLowerCase() === name;
  }

  get(name: string): string | undefined {
    const n = name.toLowerCase();
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) if (this.#at(n, i)) return l[i + 1];
    return undefined;
  }

  getAll(name: string): readonly string[] {
    const n = name.toLowerCase();
    const l = this.#list;
    const out: string[] = [];
    for (let i = 0; i < l.length; i += 2) if (this.#at(n, i)) out.push(l[i + 1] as string);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** `has` for a lower-case name. */
  #has(name: string): boolean {
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) if (this.#at(name, i)) return true;
    return false;
  }

  set(name: string, value: string): void {
    this.setTrusted(this.#checked(name, value), value);
  }

  /**
   * `set` for the proxy's own headers: `name` must already be a lower-case, valid header name and `value` a valid
   * value (neither is checked here).
   */
  setTrusted(name: string, value: string): void {
    if (!this.#copied && this.appendInPlace && !this.#has(name)) {
      this.#list.push(name, value);
      return;
    }
    const l = this.#writable();
    let at = -1;
    for (let i = 0; i < l.length; i += 2) {
      if (!this.#at(name, i)) continue;
      if (at === -1) {
        at = i;
        l[i] = name;
        l[i + 1] = value;
      } else {
        l.splice(i, 2);
        i -= 2;
      }
    }
    if (at === -1) l.push(name, value);
  }

  append(name: string, value: string): void {
    const n = this.#checked(name, value);
    (this.appendInPlace ? this.#list : this.#writable()).push(n, value);
  }

  delete(name: string): void {
    const n = name.toLowerCase();
    this.refuse(n, 'delete');
    if (this.get(n) === undefined) return;
    const l = this.#writable();
    for (let i = 0; i < l.length; i += 2) {
      if (this.#at(n, i)) {
        l.splice(i, 2);
        i -= 2;
      }
    }
  }

  *entries(): IterableIterator<[string, string]> {
    const l = this.#list;
    for (let i = 0; i < l.length; i += 2) yield [this.lowerCase ? (l[i] as string) : (l[i] as string).toLowerCase(), l[i + 1] as string];
  }

  /** Back to the list the headers started with. */
  protected restore(): void {
    this.#original.length = this.#originalLength;
    this.#list = this.#original;
    this.#copied = false;
  }

  #checked(name: string, value: string): string {
    const n = String(name).toLowerCase();
    validateHeaderName(n);
    validateHeaderValue(n, value);
    this.refuse(n, 'set');
    return n;
  }

  #writable(): string[] {
    if (!this.#copied) {
      this.#list = this.#list.slice();
      this.#copied = true;
    }
    return this.#list;
  }
}

/** A request's headers as forwarded upstream (lower-case names). */
export class ForwardHeaders extends CopyOnWriteHeaders {
  constructor(list: string[]) {
    super(list, true, true);
  }

  /** Back to the ingress headers (before a re-run). */
  reset(): void {
    this.restore();
  }

  protected refuse(name: string): void {
    if (name === 'host') throw new TypeError('request header "host" cannot be changed by a filter: the authority is decided at the ingress');
  }
}

const RESPONSE_REFUSED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...INTERNAL_HEADERS, 'content-length']);

/** A response head's headers as a filter's `onResponse` sees them. */
export class ResponseHeaders extends CopyOnWriteHeaders {
  constructor(list: string[]) {
    super(list, false, false);
  }

  protected refuse(name: string, op: 'set' | 'delete'): void {
    if (op === 'delete') {
      if (name === 'content-length') throw new TypeError('response header "content-length" cannot be removed by a filter');
      return;
    }
    if (RESPONSE_REFUSED.has(name)) throw new TypeError(`response header "${name}" cannot be set by a filter`);
  }
}
