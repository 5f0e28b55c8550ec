/** Starts `actor-edge <component> ...args` as its own process, through the project's one launcher (lib/launch.ts). */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { launch, spawnProcess, type LaunchOptions, type Launched, type LaunchedProcess } from '../lib/launch.js';

/** The CLI entry (`actor-edge <component>`), compiled. */
export const CLI_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'main.js');

/** Starts the component and returns at once (see `ready`). */
export function spawnComponent(component: string, args: readonly string[], opts: LaunchOptions = {}): LaunchedProcess {
  return spawnProcess(component, CLI_SCRIPT, [component, ...args], opts);
}

/** Starts the component and waits for its ready line. */
export function launchComponent(component: string, args: readonly string[], opts: LaunchOptions = {}): Promise<Launched> {
  return launch(component, CLI_SCRIPT, [component, ...args], opts);
}
