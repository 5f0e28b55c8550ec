/**
 * The user filters a proxy runs, as its start-up log says them: each filter's name and the module it came from, in
 * chain order. A newcomer's first question after `--filter ./my-filter.js` is whether it was picked up; the line
 * answers it before anything is served (and `npm start` repeats it in its banner).
 */
import type { FilterSpec } from './load-filters.js';

export interface LoadedFilter {
  readonly name: string;
  readonly module: string;
}

/** The first `specs.length` of `filters` are the user filters, loaded from `specs` in order (stages/assemble.ts). */
export function loadedFilters(specs: readonly FilterSpec[], filters: readonly { readonly name: string }[]): LoadedFilter[] {
  return specs.map((spec, i) => ({ name: filters[i]?.name ?? '?', module: spec.module }));
}

/** `cors (./cors.js) → error-pages (./error-pages.js)`, or `none`. */
export function describeFilters(filters: readonly LoadedFilter[]): string {
  return filters.length === 0 ? 'none' : filters.map((f) => `${f.name} (${f.module})`).join(' → ');
}
