/** Runs `stop` once on the first SIGINT or SIGTERM; a second signal exits at once. Exits 0 when stop resolves. */
import type { Logger } from './logger.js';

export function onShutdownSignal(log: Logger, stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
