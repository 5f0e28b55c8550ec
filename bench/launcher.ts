/**
 * The benchmark's processes, started the way they are deployed: one OS process per component
 * (`actor-edge <component> ...`) plus the floor forwarder (`node dist/bench/floor.js`), through the project's one
 * launcher (lib/launch.ts). Only the last lines of each process's output are kept, for error messages during long
 * runs. Nothing outlives the benchmark.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { launchComponent as launchCli } from '../cli/launch-component.js';
import { launch, type LaunchOptions, type Launched } from '../lib/launch.js';

export { killAll, type Launched, type LaunchOptions } from '../lib/launch.js';

export const FLOOR_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'floor.js');

/** Output lines kept per process. */
const TAIL = 40;

export function launchComponent(component: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launchCli(component, args, { keepLines: TAIL, ...opts });
}

export function launchFloor(args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launch('floor', FLOOR_SCRIPT, args, { keepLines: TAIL, ...opts });
}

/**
 * Processes started together and stopped together, the last started first. `LaunchGroup.build` hands a fresh group
 * to a start-up function; if that function fails part-way, every process it had started is stopped before the error
 * is rethrown, so a failed arm leaves nothing running.
 */
export class LaunchGroup {
  readonly #started: Launched[] = [];

  static async build<T>(start: (group: LaunchGroup) => Promise<T>): Promise<T> {
    const group = new LaunchGroup();
    try {
      return await start(group);
    } catch (err) {
      await group.stopAll();
      throw err;
    }
  }

  /** Keeps a process once it has started (the caller starts it: a component, the floor, another build's proxy). */
  async add(starting: Promise<Launched>): Promise<Launched> {
    const p = await starting;
    this.#started.push(p);
    return p;
  }

  /** Stops one process and forgets it (a restart adds its successor). */
  async remove(p: Launched): Promise<void> {
    const i = this.#started.indexOf(p);
    if (i >= 0) this.#started.splice(i, 1);
    await p.stop();
  }

  async stopAll(): Promise<void> {
    for (let p = this.#started.pop(); p !== undefined; p = this.#started.pop()) await p.stop();
  }
}
