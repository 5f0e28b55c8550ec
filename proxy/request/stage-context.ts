/**
 * What the built-in stages see of a request: the public `RequestContext` plus one typed slot per stage that keeps
 * per-request state (Pingora's per-request CTX). User filters keep theirs in `locals`; built-in stages never do.
 */
import type { IncomingMessage } from 'node:http';
import type { LocalReply, RequestContext } from '../api/filter.js';
import type { RequestBody } from './body.js';
import type { CacheRequestState } from '../stages/actor-cache/request-state.js';
import type { ExtProcRequestState } from '../stages/ext-proc/request-state.js';

/** A response head as node's `writeHead` takes it: the status and a flat `[name, value, ...]` list. */
export interface ResponseHead {
  readonly status: number;
  readonly headers: string[];
}

/** A local reply as the proxy writes it: like `LocalReply`, but a header may carry several values (`set-cookie`). */
export type MultiValueLocalReply = Omit<LocalReply, 'headers'> & { readonly headers?: Readonly<Record<string, string | readonly string[]>> };

/** What a response-head transform decided: write this head, or answer with a local reply instead. */
export type ResponseHeadDecision = { readonly kind: 'continue'; readonly head: ResponseHead } | { readonly kind: 'reply'; readonly reply: MultiValueLocalReply };

/**
 * Sees the upstream's response head before the router writes it (the router waits only when one is set, and
 * pauses the upstream only when it answers with a promise): ext_proc's response headers, then the filters'
 * response phase (`chain/response-phase.ts`), which the chain composes into this one hook.
 */
export type ResponseHeadTransform = (head: ResponseHead) => ResponseHeadDecision | Promise<ResponseHeadDecision>;

export interface StageContext extends RequestContext {
  /** The request line as forwarded; ext-proc may rewrite it (reset before a re-run). */
  method: string;
  path: string;
  /** The request body (null: none); absent in contexts without one. */
  readonly body?: RequestBody | null;
  /** node's request (the connection's addresses); absent in contexts without one. */
  readonly req?: IncomingMessage;
  /** See `ResponseHeadTransform`; cleared before a re-run. */
  responseHeadTransform?: ResponseHeadTransform | undefined;
  /** The request has a body (ext_proc's `end_of_stream` on the request headers). */
  readonly hasBody: boolean;
  /** actor-cache's state; undefined until the cache saw an actor host. */
  actorCache: CacheRequestState | undefined;
  /** ext-proc's state; undefined until a stream was opened. */
  extProc: ExtProcRequestState | undefined;
}
