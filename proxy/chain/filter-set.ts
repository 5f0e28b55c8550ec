/**
 * One generation of the chain's filters: the user filters (`--filter` / the config file's `filters`, first) and
 * the built-in stages' filters after them. Immutable: a reload builds a new set with new user filters and the same
 * stage filters (so the binding cache and the ext_proc channel survive), and each request keeps the set it started
 * with until it is finished — requests in flight finish on the old filters, new ones get the new.
 */
import type { Filter } from '../api/filter.js';
import type { ProxyRequest } from '../request/context.js';
import type { ChainResponse } from './chain-response.js';

/** A filter as the chain runs it: user filters and the built-in stages' filters, on the proxy's own request and response. */
export type ChainFilter = Filter<ProxyRequest, ChainResponse>;

export class FilterSet {
  readonly filters: readonly ChainFilter[];
  readonly reversed: readonly ChainFilter[];
  /** The first `userFilters` filters are user filters (bounded by `--filter-timeout-ms`; replaced by a reload). */
  readonly userFilters: number;
  /** The lowest index of a filter with `onResponse` (the filters' length when none has one). */
  readonly #firstResponder: number;

  constructor(
    filters: readonly ChainFilter[],
    userFilters: number,
    /** 0 for the filters the proxy started with, then 1, 2, ... for each reload. */
    readonly generation: number,
    /** `--filter-timeout-ms` for the user filters of this set. */
    readonly timeoutMs: number,
  ) {
    for (const f of filters) {
      if (typeof f?.name !== 'string' || f.name === '') throw new Error('every filter needs a name');
    }
    this.filters = [...filters];
    this.reversed = [...filters].reverse();
    this.userFilters = userFilters;
    const first = filters.findIndex((f) => f.onResponse !== undefined);
    this.#firstResponder = first === -1 ? filters.length : first;
  }

  /** Some filter before index `upto` (exclusive) has a response phase. */
  respondsBefore(upto: number): boolean {
    return this.#firstResponder < upto;
  }

  /** The same stage filters behind new user filters: the next generation. */
  withUserFilters(user: readonly ChainFilter[], timeoutMs: number): FilterSet {
    return new FilterSet([...user, ...this.filters.slice(this.userFilters)], user.length, this.generation + 1, timeoutMs);
  }

  /** The user filters' names, in order. */
  get userFilterNames(): string[] {
    return this.filters.slice(0, this.userFilters).map((f) => f.name);
  }
}
