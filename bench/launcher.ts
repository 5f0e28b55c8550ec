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
