/** The apiserver-stub in the test's own process, from the same flags its process takes (`actor-edge apiserver-stub`). */
import { UsageError } from '../../lib/flags.js';
import { collectingLogger, type InProcessComponent } from '../../lib/testing/component.js';
import { readStubConfig } from '../config.js';
import { startApiserverStub, type RunningStub } from '../stub.js';

export interface InProcessStub extends InProcessComponent {
  readonly running: RunningStub;
}

/** Starts the stub from `args` (its environment: `env` only, never the test's). */
export async function startStubInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<InProcessStub> {
  const read = readStubConfig(args, env);
  if (read.kind === 'help') throw new UsageError('--help is not a stub to start');
  const { log, lines } = collectingLogger('apiserver-stub');
  const running = await startApiserverStub(read.config, log);
  return { running, addresses: running.addresses, logs: () => lines, stop: () => running.close() };
}
