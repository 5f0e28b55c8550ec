/**
 * `actor-edge proxy`: reads the config and runs one proxy process (`--workers 1`) or a node:cluster primary with
 * N ingress workers sharing the listener. The chain's stages come from `chain/assemble.ts`.
 */
import cluster from 'node:cluster';
import { formatHelp, UsageError } from '../lib/flags.js';
import { TlsFileError } from '../lib/tls/files.js';
import { loadUpstreamTls } from './upstream/tls.js';
import { loadExtProcTls } from './stages/ext-proc/channel-tls.js';
import { createLogger } from '../lib/logger.js';
import { PROXY_FLAGS, readProxyConfig, type ProxyConfig } from './config.js';
import { assembleStages } from './stages/assemble.js';
import { startProxyProcess } from './proxy-process.js';
import { loadCertificate } from './edge/tls-certificate.js';
import { runClusterPrimary } from './cluster/primary.js';
import { runClusterWorker } from './cluster/worker.js';

const SUMMARY =
  'The ingress proxy: user filters, then actor-cache (cache-first actor bindings), then ext_proc (one stream per miss), then the router.';

export async function main(argv: string[]): Promise<void> {
  const { help, config } = readProxyConfig(argv);
  if (help || config === undefined) {
    process.stdout.write(formatHelp('proxy', SUMMARY, PROXY_FLAGS));
    return;
  }
  // A missing or unusable certificate stops the start here, with its reason (workers would only fail one by one).
  if (config.listeners.tls !== undefined) loadCertificate(config.listeners.tls);
  if (config.upstream.tls !== undefined && !cluster.isWorker) {
    try {
      loadUpstreamTls(config.upstream.tls); // a missing or unusable file stops the start with a message naming it
    } catch (err) {
      if (err instanceof TlsFileError) throw new UsageError(err.message);
      throw err;
    }
  }
  if (config.extProc.tls !== undefined && config.resolver.kind === 'extproc' && !cluster.isWorker) loadExtProcTls(config.extProc.tls);
  // A reload reads the config again from the same flags and environment (and the config file, again).
  const rereadConfig = () => readProxyConfig(argv).config as ProxyConfig;
  if (cluster.isWorker) {
    await runClusterWorker(config, assembleStages, rereadConfig);
    return;
  }
  if (config.workers > 1) {
    await runClusterPrimary(config, createLogger('proxy'));
    return;
  }
  await startProxyProcess(config, assembleStages, { role: 'standalone', rereadConfig });
}
