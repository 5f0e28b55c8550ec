/** extproc in the test's own process, from the same flags its process takes (`actor-edge extproc`). */
import { UsageError } from '../../lib/flags.js';
import { collectingLogger, type InProcessComponent } from '../../lib/testing/component.js';
import { readExtprocConfig } from '../config.js';
import { startExtproc, type RunningExtproc } from '../server.js';

export interface InProcessExtproc extends InProcessComponent {
  readonly running: RunningExtproc;
}

/** Starts extproc from `args` (its environment: `env` only, never the test's). */
export async function startExtprocInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<InProcessExtproc> {
  const read = readExtprocConfig(args, env);
  if (read.kind === 'help') throw new UsageError('--help is not an extproc to start');
  const { log, lines } = collectingLogger('extproc');
  const running = await startExtproc(read.config, log);
  return { running, addresses: { grpc: running.grpcAddress, admin: running.adminAddress }, logs: () => lines, stop: () => running.close() };
}
