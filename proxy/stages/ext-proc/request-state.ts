/** The ext-proc stage's state for one client request (a typed slot on the request context, across re-runs). */
import { RequestSlot } from '../../request/slots.js';
import type { ExtProcStream } from './client.js';
import type { ResponseResult } from '../../api/filter.js';
import type { ChainResponse } from '../../chain/chain-response.js';

export interface ExtProcRequestState {
  /** The request's open stream (kept for the response headers when they are sent), until it is closed. */
  stream: ExtProcStream | undefined;
  /** Milliseconds spent waiting for ext_proc, summed over attempts (the access log's `extprocMs`). */
  elapsedMs: number;
  /** The stream kept for the response headers (`response_header_mode: SEND`), until the response phase ran. */
  responsePhase: PendingResponsePhase | undefined;
}

/** A response-headers round trip the request phase prepared: run it on the upstream's head, or close its stream. */
export interface PendingResponsePhase {
  run(response: ChainResponse): Promise<ResponseResult>;
  close(): void;
}

/** Where a request keeps its ext_proc state. */
export const EXT_PROC_SLOT = new RequestSlot<ExtProcRequestState>('ext-proc');
