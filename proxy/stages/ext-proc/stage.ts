/** The ext-proc stage: the default resolver of cache misses (one ext_proc stream per request it handles). */
import { formatHostPort } from '../../../lib/address.js';
import { ExtProcClient } from './grpc-client.js';
import { createExtProcFilter } from './filter.js';
import type { ProxyStage, StageDeps } from '../../chain/stage.js';

export function createExtProcStage(deps: StageDeps): ProxyStage {
  const { config } = deps;
  const client = new ExtProcClient({
    address: formatHostPort(config.extproc.host, config.extproc.port),
    messageTimeoutMs: config.extprocMessageTimeoutMs,
    counters: deps.counters,
  });
  return {
    filter: createExtProcFilter({
      client,
      failureModeAllow: config.failureModeAllow,
      sendResponseHeaders: config.extprocResponseHeaders === 'send',
    }),
    close: () => client.close(),
  };
}
