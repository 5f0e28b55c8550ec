/**
 * The HTTP/2 server's response object: node's compatibility `Http2ServerResponse`, plus `destroyed` (the stream's),
 * which node's HTTP/1.1 `ServerResponse` has and the proxy reads to know whether the client is still there.
 */
import http2 from 'node:http2';

export class EdgeH2Response extends http2.Http2ServerResponse {}

Object.defineProperty(EdgeH2Response.prototype, 'destroyed', {
  get(this: EdgeH2Response): boolean {
    return this.stream.destroyed;
  },
});
