/**
 * HTTP size limits shared by the proxy's ingress and the upstreams it forwards to, so that any request head the
 * proxy accepts is also accepted by a worker.
 */

/** The largest request head the ingress accepts (431 above), as Envoy's max_request_headers_kb default. */
export const MAX_HEADER_BYTES = 60 * 1024;

/** Room for what the proxy adds to a forwarded head (x-forwarded-*, x-request-id, the routing headers). */
export const FORWARDED_HEAD_ALLOWANCE_BYTES = 4 * 1024;

/** The request head limit of an upstream (a worker): everything the proxy forwards fits. */
export const UPSTREAM_MAX_HEADER_BYTES = MAX_HEADER_BYTES + FORWARDED_HEAD_ALLOWANCE_BYTES;
