/** `actor-edge extproc`: the Envoy ext_proc v3 server that resolves actors through ResumeActor. */
import { formatHelp } from '../lib/flags.js';
import { createLogger, logReady } from '../lib/logger.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { EXTPROC_FLAGS, readExtprocConfig } from './config.js';
import { startExtproc } from './server.js';

export const SUMMARY =
  'The Envoy ext_proc v3 server (envoy.service.ext_proc.v3.ExternalProcessor/Process): resolves the actor named by the ' +
  'request authority through ateapi.Control/ResumeActor and publishes the worker address as dynamic metadata.';

export async function main(argv: string[]): Promise<void> {
  const { help, config } = readExtprocConfig(argv);
  if (help || !config) {
    process.stdout.write(formatHelp('extproc', SUMMARY, EXTPROC_FLAGS));
    return;
  }
  const log = createLogger('extproc');
  const running = await startExtproc(config, log);
  log.info(
    { apiserver: config.apiserver, workerPort: config.workerPort, parking: config.parking ?? 'off', resumeBudgetMs: config.resumeBudgetMs },
    'extproc configured',
  );
  logReady(log, { grpc: running.grpcAddress, admin: running.adminAddress });
  onShutdownSignal(log, () => running.close());
}
