#!/usr/bin/env node
/**
 * Container entry point: `node dist/scripts/container-entry.js <component> [flags]`, the same as
 * `node dist/cli/main.js`, except that an advertise IP of `auto` becomes this container's own IPv4 address
 * (compose cannot know a container's address before it starts).
 */
import { containerIPv4, resolveAutoAdvertise } from './container-ip.js';

function ownIp(): string {
  const found = containerIPv4();
  if (found.kind === 'none') {
    process.stderr.write(`actor-edge: cannot resolve advertise ip "auto": ${found.reason}\n`);
    process.exit(2);
  }
  return found.ip;
}

const resolved = resolveAutoAdvertise(process.argv.slice(2), process.env, ownIp);
if (resolved.advertiseEnv !== undefined) process.env.WORKER_ADVERTISE_IP = resolved.advertiseEnv;
process.argv.splice(2, process.argv.length - 2, ...resolved.argv);
await import('../cli/main.js');
