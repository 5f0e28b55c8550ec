/**
 * The process's own faults while a fuzz run goes on: every `uncaughtException` and `unhandledRejection`. With a
 * listener installed the process survives them (node ends a process only for a fault nobody listens to), so each
 * one is recorded and the property fails on the case during which it happened, instead of the run ending there.
 */
export interface Fault {
  readonly kind: 'uncaughtException' | 'unhandledRejection';
  readonly error: string;
}

export class FaultRecorder {
  readonly #faults: Fault[] = [];
  readonly #onException = (err: unknown): void => void this.#faults.push({ kind: 'uncaughtException', error: describe(err) });
  readonly #onRejection = (reason: unknown): void => void this.#faults.push({ kind: 'unhandledRejection', error: describe(reason) });

  constructor() {
    process.on('uncaughtException', this.#onException);
    process.on('unhandledRejection', this.#onRejection);
  }

  /** The faults recorded since the last call (and forgets them). */
  take(): Fault[] {
    return this.#faults.splice(0);
  }

  /** Stops recording. */
  stop(): void {
    process.off('uncaughtException', this.#onException);
    process.off('unhandledRejection', this.#onRejection);
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) return (err.stack ?? `${err.name}: ${err.message}`).split('\n').slice(0, 8).join('\n');
  return String(err);
}
