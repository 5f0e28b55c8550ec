/** The ext-proc stage's state for one client request (a typed slot on the request context, across re-runs). */
import type { ExtProcStream } from './client.js';

export interface ExtProcRequestState {
  /** The stream kept open for the response headers (`--extproc-response-headers send`), until they are sent. */
  stream: ExtProcStream | undefined;
  /** Milliseconds spent waiting for ext_proc, summed over attempts (the access log's `extprocMs`). */
  elapsedMs: number;
}
