/**
 * A processor's `mode_override` on a request-headers answer, honoured only with `allow_mode_override` (Envoy
 * >= 1.34 semantics): `request_header_mode` is ignored (the headers are already sent), a DEFAULT header mode
 * leaves that mode unchanged, and the request body mode is always applied — NONE or BUFFERED; a mode the proxy
 * cannot do leaves it unchanged. Response bodies and trailers are never sent.
 */
import type { ProcessingModeMessage } from './messages.js';
import type { ProcessingMode } from './settings.js';

export function overrideMode(mode: ProcessingMode, o: ProcessingModeMessage | null | undefined): ProcessingMode {
  if (o == null) return mode;
  const response = o.response_header_mode;
  const body = o.request_body_mode ?? 'NONE';
  return {
    requestHeaderMode: mode.requestHeaderMode,
    responseHeaderMode: response === 'SEND' || response === 'SKIP' ? response : mode.responseHeaderMode,
    requestBodyMode: body === 'NONE' || body === 'BUFFERED' ? body : mode.requestBodyMode,
  };
}
