/** `actor-edge --version`: the package's version (from its package.json) and the Node.js running it. */
import { readFileSync } from 'node:fs';

/** The package.json next to dist/ (this file is dist/cli/version.js). */
const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { name?: string; version?: string };
  return pkg.version ?? 'unknown';
}

export function versionText(): string {
  return `actor-edge ${packageVersion()} (Node.js ${process.version})\n`;
}

/**
 * True when `--version` is one of the arguments. parseArgs never takes an argument that starts with "-" as a
 * flag's value, so a `--version` token is always the flag itself.
 */
export function wantsVersion(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--version');
}
