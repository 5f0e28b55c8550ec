#!/usr/bin/env node
/**
 * `npm run k8s:check [-- overlay ...]`: renders each overlay of deploy/kubernetes (default: every one) with the
 * in-repo renderer and validates every object strictly against Kubernetes' API (schema.ts), offline. Prints one
 * line per overlay, or the problems; exit status 1 when there is any. `--print <overlay>` writes the rendered
 * objects as YAML instead.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { KustomizeError, renderKustomization } from './kustomize.js';
import { formatProblems, KUBERNETES_VERSION, validateManifests } from './schema.js';

const OVERLAYS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/kubernetes/overlays');
const args = process.argv.slice(2);

try {
  if (args[0] === '--print') {
    const objects = renderKustomization(path.join(OVERLAYS, args[1] ?? 'dev'));
    process.stdout.write(objects.map((o) => stringify(o)).join('---\n'));
    process.exit(0);
  }
  const names = args.length > 0 ? args : readdirSync(OVERLAYS).sort();
  let failed = false;
  for (const name of names) {
    const objects = renderKustomization(path.join(OVERLAYS, name));
    const problems = validateManifests(objects);
    if (problems.length === 0) {
      process.stdout.write(`${name}: ${objects.length} objects, valid against Kubernetes ${KUBERNETES_VERSION} (unknown fields rejected)\n`);
    } else {
      failed = true;
      process.stdout.write(`${name}: ${problems.length} problem(s)\n${formatProblems(problems)}\n`);
    }
  }
  process.exit(failed ? 1 : 0);
} catch (err) {
  if (!(err instanceof KustomizeError) && (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  process.stderr.write(`k8s:check: ${(err as Error).message}\n`);
  process.exit(2);
}
