/** Start-up actors: `--actors N` in `--atespace`, named actor-000 … (wider than 3 digits when N > 1000), SUSPENDED. */
import type { Store } from './store.js';

export function seedActorNames(count: number): string[] {
  const width = Math.max(3, String(Math.max(0, count - 1)).length);
  return Array.from({ length: count }, (_, i) => `actor-${String(i).padStart(width, '0')}`);
}

export function seedActors(store: Store, atespace: string, count: number): void {
  for (const name of seedActorNames(count)) store.createActor({ atespace, name });
}
