/** Test helper: the actor names the tests use, as request authorities (`<name>.<atespace>.<suffix>[:port]`). */
import { DEFAULT_ACTOR_SUFFIX } from '../actor-ref.js';

export const SUFFIX = DEFAULT_ACTOR_SUFFIX;
/** The atespace apiserver-stub seeds by default. */
export const ATESPACE = 'demo';

export function actorHost(name: string, atespace = ATESPACE, port?: number): string {
  return `${name}.${atespace}.${SUFFIX}${port === undefined ? '' : `:${port}`}`;
}
