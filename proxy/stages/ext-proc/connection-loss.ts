/**
 * Whether a Process call ended because its connection failed rather than because the processor answered. grpc-js
 * reports an HTTP/2 stream reset with INTERNAL_ERROR and no gRPC status as INTERNAL with the details
 * `Received RST_STREAM with code 2 …`: the stream was reset by the processor's HTTP/2 layer (`(Internal server
 * error)`), or the whole connection closed under it with an error (`triggered by internal client error: Session
 * closed with error code N`, a GOAWAY with an error code). A processor's HTTP/2 server sends such a GOAWAY when its
 * peer resets streams faster than it allows (nghttp2's reset-rate guard, which Node's HTTP/2 servers have): a
 * burst of cancelled streams (clients leaving a flood of misses) ends every other stream open on that connection at
 * once, and streams opened before the GOAWAY arrives. A processor's own INTERNAL comes as a status, with its own
 * message, and is its answer.
 */

/** The start of grpc-js's details for a stream reset with NGHTTP2_INTERNAL_ERROR (2) and no gRPC status. */
const RESET_INTERNAL_ERROR = 'Received RST_STREAM with code 2 ';

/** `code`: the gRPC status code's name (`INTERNAL`), `details` as grpc-js reported them. */
export function isConnectionLoss(code: string, details: string): boolean {
  return code === 'INTERNAL' && details.startsWith(RESET_INTERNAL_ERROR);
}
