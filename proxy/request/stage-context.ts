/**
 * What the built-in stages see of a request: the public `RequestContext` plus one typed slot per stage that keeps
 * per-request state (Pingora's per-request CTX). User filters keep theirs in `locals`; built-in stages never do.
 */
import type { RequestContext } from '../api/filter.js';
import type { CacheRequestState } from '../stages/actor-cache/request-state.js';
import type { ExtProcRequestState } from '../stages/ext-proc/request-state.js';

export interface StageContext extends RequestContext {
  /** The request has a body (ext_proc's `end_of_stream` on the request headers). */
  readonly hasBody: boolean;
  /** actor-cache's state; undefined until the cache saw an actor host. */
  actorCache: CacheRequestState | undefined;
  /** ext-proc's state; undefined until a stream was opened. */
  extProc: ExtProcRequestState | undefined;
}
