/**
 * `actor-edge proxy`: reads the config and runs one proxy process (`--workers 1`) or a node:cluster primary with
 * N ingress workers sharing the listener. The chain's stages come from `stages/assemble.ts`.
 */
import cluster from 'node:cluster';
import { flagSetHelp } from '../lib/flags.js';
import { createLogger, logConfigWarnings } from '../lib/logger.js';
import { applyV8Flags, PROXY_V8_FLAGS } from '../lib/v8-tuning.js';
import { PROXY_FLAG_SET, proxyConfigOf, readProxyConfig } from './config.js';
import { assembleStages } from './stages/assemble.js';
import { startProxyProcess } from './proxy-process.js';
import { checkProxyFiles } from './startup-checks.js';

export async function main(argv: string[]): Promise<void> {
  // Before anything is served (each cluster worker runs this too): see lib/v8-tuning.ts.
  applyV8Flags(PROXY_V8_FLAGS);
  const read = readProxyConfig(argv);
  if (read.kind === 'help') {
    process.stdout.write(flagSetHelp(PROXY_FLAG_SET));
    return;
  }
  const { config } = read;
  if (!cluster.isWorker) logConfigWarnings(createLogger('proxy'), read.warnings);
  // A missing or unusable certificate or bundle stops the start here, with its reason (workers would only fail one
  // by one); cluster workers leave the bundles to the primary, which checked them.
  checkProxyFiles(config, { upstream: !cluster.isWorker });
  // A reload reads the config again from the same flags and environment (and the config file, again).
  const rereadConfig = () => proxyConfigOf(argv);
  // The cluster's modules are loaded only by a cluster's processes (`--workers N`, N > 1).
  if (cluster.isWorker) {
    const { runClusterWorker } = await import('./cluster/worker.js');
    await runClusterWorker(config, assembleStages, rereadConfig);
    return;
  }
  if (config.workers > 1) {
    const { runClusterPrimary } = await import('./cluster/primary.js');
    await runClusterPrimary(config, createLogger('proxy'));
    return;
  }
  await startProxyProcess(config, assembleStages, { role: 'standalone', rereadConfig });
}
