#!/usr/bin/env node
/**
 * `node dist/scripts/image-dist.js FROM TO`: copies the compiled files the runtime image needs from FROM to TO —
 * the components (cli, proxy, extproc, apiserver-stub, lib) and the container helpers — and nothing else: no
 * tests or test helpers, no type declarations, no benchmark (it has its own image), no examples, no stack launcher,
 * no compose checks. The Dockerfile's runtime stage copies TO.
 */
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const COMPONENT_DIRS = new Set(['cli', 'proxy', 'extproc', 'apiserver-stub', 'lib']);
const CONTAINER_SCRIPTS = new Set(['container-entry.js', 'container-ip.js', 'healthcheck.js']);

/** Whether the compiled file at `rel` (POSIX path under dist/) belongs in the runtime image. */
export function runtimeFile(rel: string): boolean {
  const parts = rel.split('/');
  if (parts.some((p) => p === 'testing' || p === 'e2e')) return false;
  const name = parts[parts.length - 1] ?? '';
  if (!/\.js(\.map)?$/.test(name) || /\.test\.js(\.map)?$/.test(name)) return false;
  const top = parts[0] ?? '';
  if (COMPONENT_DIRS.has(top)) return true;
  return top === 'scripts' && parts.length === 2 && CONTAINER_SCRIPTS.has(name.replace(/\.map$/, ''));
}

function walk(root: string, rel = ''): string[] {
  return readdirSync(path.join(root, rel)).flatMap((entry) => {
    const r = rel === '' ? entry : `${rel}/${entry}`;
    return statSync(path.join(root, r)).isDirectory() ? walk(root, r) : [r];
  });
}

export function copyRuntimeFiles(from: string, to: string): number {
  const files = walk(from).filter(runtimeFile);
  for (const rel of files) {
    mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    cpSync(path.join(from, rel), path.join(to, rel));
  }
  return files.length;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [from, to] = process.argv.slice(2);
  if (from === undefined || to === undefined) {
    process.stderr.write('usage: image-dist.js FROM TO\n');
    process.exit(2);
  }
  process.stdout.write(`image-dist: ${copyRuntimeFiles(from, to)} files into ${to}\n`);
}
