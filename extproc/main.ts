/** `actor-edge extproc`: the Envoy ext_proc v3 server that resolves actors through ResumeActor. */
import { flagSetHelp } from '../lib/flags.js';
import { componentStart } from '../lib/component-start.js';
import { logReady } from '../lib/logger.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { EXTPROC_FLAG_SET, readExtprocConfig } from './config.js';
import { startExtproc } from './server.js';

export async function main(argv: string[]): Promise<void> {
  const start = componentStart('extproc', readExtprocConfig(argv), () => flagSetHelp(EXTPROC_FLAG_SET));
  if (start === undefined) return;
  const { config, log } = start;
  const running = await startExtproc(config, log);
  log.info(
    { apiserver: config.apiserver, workerPort: config.workerPort, parking: config.parking ?? 'off', resumeBudgetMs: config.resumeBudgetMs },
    'extproc configured',
  );
  logReady(log, { grpc: running.grpcAddress, admin: running.adminAddress });
  onShutdownSignal(log, () => running.close());
}
