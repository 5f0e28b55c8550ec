// A package-lock.json for a scratch project that depends on a packed actor-edge tarball, built from this
// repository's own package-lock.json, so `npm ci --offline` installs it from the npm cache alone. npm's cache holds
// the package tarballs an `npm ci` of this repository fetched, keyed by integrity, but not the registry's metadata
// that `npm install <range>` needs to resolve a version: a lockfile naming each version, its tarball and integrity
// is what lets an install skip the registry.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** npm's lookup: `dep` as seen from the package at `from` (`node_modules/a/node_modules/b`), nearest first. */
function locate(packages, from, dep) {
  for (let dir = from; ; ) {
    const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${dep}`;
    if (packages[candidate] !== undefined) return candidate;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

/**
 * The lockfile (lockfile v3) for `project` (its parsed package.json, in `projectDir`), whose devDependencies name
 * actor-edge as `file:` the tarball at `tarball` (packed from `manifest`, this repository's package.json) and other
 * packages this repository's lock (`repoLock`) holds. Throws naming a package the lock does not hold.
 */
export function offlineLock({ project, projectDir, tarball, manifest, repoLock }) {
  const source = repoLock.packages;
  const packages = {
    '': { name: project.name, version: project.version, devDependencies: project.devDependencies },
    'node_modules/actor-edge': {
      version: manifest.version,
      resolved: `file:${path.relative(projectDir, tarball).split(path.sep).join('/')}`,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      dev: true,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  // Everything the project's dependencies need, at the paths this repository's tree has them (hoisting included).
  // An optional dependency this platform does not use is not in the lock: it is left out here too.
  const pending = Object.keys(project.devDependencies).filter((d) => d !== 'actor-edge').map((d) => ['', d, false]);
  pending.push(...Object.keys(manifest.dependencies ?? {}).map((d) => ['', d, false]));
  while (pending.length > 0) {
    const [from, dep, optional] = pending.pop();
    const at = locate(source, from, dep);
    if (at === undefined) {
      if (optional) continue;
      throw new Error(`offline-lock: ${dep} (needed from ${from || 'the project'}) is not in package-lock.json`);
    }
    if (packages[at] !== undefined) continue;
    const entry = source[at];
    packages[at] = { ...entry, dev: true };
    delete packages[at].devOptional;
    for (const d of Object.keys(entry.dependencies ?? {})) pending.push([at, d, false]);
    for (const d of Object.keys(entry.optionalDependencies ?? {})) pending.push([at, d, true]);
  }
  return { name: project.name, version: project.version, lockfileVersion: 3, requires: true, packages };
}
