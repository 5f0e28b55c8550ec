/**
 * What this build is: the package version (from the package's own package.json, which ships with it) and the
 * Node.js version running it. Every component exports it as `actor_edge_<component>_build_info` (a gauge of 1)
 * and in its admin's `GET /` and `GET /server_info`.
 */
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  readonly version: string;
  readonly nodeVersion: string;
}

function packageVersion(): string {
  try {
    // This file compiles to dist/lib/build-info.js; the package root is two levels up.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const BUILD_INFO: BuildInfo = Object.freeze({ version: packageVersion(), nodeVersion: process.versions.node });
