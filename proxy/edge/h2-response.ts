/**
 * The HTTP/2 server's response object: node's compatibility `Http2ServerResponse`, with `destroyed` and
 * `writableFinished` as node's HTTP/1.1 `ServerResponse` means them (the proxy reads both to tell a complete
 * response from a client that left): the stream's own. node's compatibility object reports `writableFinished`
 * once the stream closed, also when the client reset it; here a reset stream's response is not finished.
 */
import http2 from 'node:http2';

export class EdgeH2Response extends http2.Http2ServerResponse {}

Object.defineProperties(EdgeH2Response.prototype, {
  destroyed: {
    get(this: EdgeH2Response): boolean {
      return this.stream.destroyed;
    },
  },
  writableFinished: {
    get(this: EdgeH2Response): boolean {
      // A reset stream reports its writable side finished too: only a stream closed without error completed.
      const rstCode = this.stream.rstCode;
      return this.stream.writableFinished && (rstCode === undefined || rstCode === http2.constants.NGHTTP2_NO_ERROR);
    },
  },
});
