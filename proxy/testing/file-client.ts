/**
 * Test helper: the keep-alive client of the end-to-end helpers (`stack.ts`), one per test file. A file closes it
 * first in its `after` hook (a drain waits out its idle grace for an open keep-alive connection); closing it ends
 * the connections of the agent in use and puts a fresh one in its place, so the next test file that shares the
 * process (several files to a process under `npm test`) sends on new connections of its own instead of on a
 * closed client.
 */
import { Agent, Dispatcher } from 'undici';

const agentOptions = { keepAliveTimeout: 1000, connections: 64 } as const;

export class FileClient extends Dispatcher {
  #agent = new Agent(agentOptions);

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#agent.dispatch(options, handler);
  }

  /** Closes the agent in use (its requests finish first) and starts the next file on a fresh one. */
  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closing = this.#renew().close();
    if (callback === undefined) return closing;
    void closing.then(callback, callback);
  }

  /** Destroys the agent in use (its requests fail) and starts the next file on a fresh one. */
  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null);
    const done = typeof errOrCallback === 'function' ? errOrCallback : callback;
    const destroying = this.#renew().destroy(err);
    if (done === undefined) return destroying;
    void destroying.then(done, done);
  }

  #renew(): Agent {
    const used = this.#agent;
    this.#agent = new Agent(agentOptions);
    return used;
  }
}
