/**
 * The upstream path for gRPC: one HTTP/2 session per worker, its streams multiplexed. Plain, with prior knowledge
 * (h2c, undici's `H2CClient`); with mTLS to the workers, over the TLS connector offering ALPN `h2` (the same
 * verification as the HTTP/1.1 pools, `tls.ts`). The worker's own SETTINGS_MAX_CONCURRENT_STREAMS lowers
 * `H2C_MAX_STREAMS`; requests beyond the streams wait in the session's queue, bounded like an HTTP/1.1 pool
 * (`--upstream-max-pending`). Which requests take this path is `protocol-choice.ts`.
 */
import { Client, H2CClient } from 'undici';
import { UpstreamPools, type CreateDispatcher, type PoolOptions } from './pools.js';

/** Streams the proxy opens on one worker's session at most. */
export const H2C_MAX_STREAMS = 100;

const createH2Client: CreateDispatcher = (address, opts) => {
  const common = {
    maxConcurrentStreams: H2C_MAX_STREAMS,
    pipelining: H2C_MAX_STREAMS,
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
  };
  const dispatcher =
    opts.connector === undefined
      ? new H2CClient(`http://${address}`, { ...common, connect: { timeout: opts.connectTimeoutMs } })
      : new Client(`https://${address}`, { ...common, allowH2: true, connect: opts.connector });
  return { dispatcher, limit: H2C_MAX_STREAMS + opts.maxPending };
};

/** One HTTP/2 session per worker address, swept when idle like the HTTP/1.1 pools. `opts.connector`, when given, must offer ALPN `h2`. */
export function createH2Sessions(opts: PoolOptions): UpstreamPools {
  return new UpstreamPools(opts, createH2Client);
}
