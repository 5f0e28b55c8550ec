/**
 * The upstream path for gRPC: one HTTP/2 session per worker, with prior knowledge (h2c), its streams multiplexed
 * (undici's `H2CClient`). The worker's own SETTINGS_MAX_CONCURRENT_STREAMS lowers `H2C_MAX_STREAMS`; requests
 * beyond the streams wait in the session's queue, bounded like an HTTP/1.1 pool (`--upstream-max-pending`).
 * Which requests take this path is `protocol-choice.ts`.
 */
import { H2CClient } from 'undici';
import { UpstreamPools, type CreateDispatcher, type PoolOptions } from './pools.js';

/** Streams the proxy opens on one worker's session at most. */
export const H2C_MAX_STREAMS = 100;

const createH2cClient: CreateDispatcher = (address, opts) => ({
  dispatcher: new H2CClient(`http://${address}`, {
    maxConcurrentStreams: H2C_MAX_STREAMS,
    pipelining: H2C_MAX_STREAMS,
    connect: { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
  }),
  limit: H2C_MAX_STREAMS + opts.maxPending,
});

/** One h2c session per worker address, swept when idle like the HTTP/1.1 pools. */
export function createH2cSessions(opts: PoolOptions): UpstreamPools {
  return new UpstreamPools(opts, createH2cClient);
}
