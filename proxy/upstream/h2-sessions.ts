/**
 * The upstream path for gRPC: one HTTP/2 session per worker, its streams multiplexed (`h2-dispatcher.ts`). Plain,
 * with prior knowledge (h2c); with mTLS to the workers, over the TLS connector offering ALPN `h2` (the same
 * verification as the HTTP/1.1 pools, `tls.ts`). Calls beyond the worker's SETTINGS_MAX_CONCURRENT_STREAMS wait for
 * a stream, within their route timeout; the calls one worker holds are bounded like an HTTP/1.1 pool's
 * (`H2_MAX_STREAMS` + `--upstream-max-pending`). Which requests take this path is the router's choice (gRPC from a
 * client that carries it end to end).
 */
import { UpstreamPools, type CreateDispatcher, type PoolOptions } from './pools.js';
import { H2_MAX_STREAMS, H2SessionDispatcher } from './h2-dispatcher.js';

const createH2Session: CreateDispatcher = (address, opts) => ({
  dispatcher: new H2SessionDispatcher(address, {
    connectTimeoutMs: opts.connectTimeoutMs,
    headersTimeoutMs: opts.headersTimeoutMs,
    bodyTimeoutMs: opts.bodyTimeoutMs,
    ...(opts.connector === undefined ? {} : { connector: opts.connector }),
  }),
  limit: H2_MAX_STREAMS + opts.maxPending,
});

/** One HTTP/2 session per worker address, swept when idle like the HTTP/1.1 pools. `opts.connector`, when given, must offer ALPN `h2`. */
export function createH2Sessions(opts: PoolOptions): UpstreamPools {
  return new UpstreamPools(opts, createH2Session);
}
