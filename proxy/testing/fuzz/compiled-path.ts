/** A test module's own file as a path relative to the working directory (for the replay command a failure prints). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function compiledPath(moduleUrl: string): string {
  return path.relative(process.cwd(), fileURLToPath(moduleUrl));
}
