/**
 * The first steps every component's `main` takes, in one place: `--help` printed (nothing more to do), or the
 * component's logger, with the deprecated names its config read used logged once as warnings.
 */
import type { Logger } from 'pino';
import type { ComponentConfigRead } from './component-config.js';
import { createLogger, logConfigWarnings } from './logger.js';

export interface ComponentStart<C> {
  readonly config: C;
  readonly log: Logger;
}

/** `help`: the component's `--help` text; undefined when it was printed. */
export function componentStart<C>(component: string, read: ComponentConfigRead<C>, help: () => string, out: NodeJS.WritableStream = process.stdout): ComponentStart<C> | undefined {
  if (read.kind === 'help') {
    out.write(help());
    return undefined;
  }
  const log = createLogger(component);
  logConfigWarnings(log, read.warnings);
  return { config: read.config, log };
}
