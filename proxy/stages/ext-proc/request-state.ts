/** The ext-proc stage's state for one client request (a typed slot on the request context, across re-runs). */
import type { ExtProcStream } from './client.js';

export interface ExtProcRequestState {
  /** The request's open stream (kept for the response headers when they are sent), until it is closed. */
  stream: ExtProcStream | undefined;
  /** Milliseconds spent waiting for ext_proc, summed over attempts (the access log's `extprocMs`). */
  elapsedMs: number;
}
