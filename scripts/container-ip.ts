/**
 * The container's own IPv4 address, for workers that must advertise where other containers can reach them.
 * `WORKER_ADVERTISE_IP=auto` (or `--advertise-ip auto`) is resolved with this before the worker starts.
 */
import os from 'node:os';

export type InterfaceMap = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

export type ContainerIp = { kind: 'ok'; ip: string } | { kind: 'none'; reason: string };

/** The first non-internal IPv4 address, preferring interfaces in name order (eth0 before eth1). */
export function containerIPv4(interfaces: InterfaceMap = os.networkInterfaces()): ContainerIp {
  const names = Object.keys(interfaces).sort();
  for (const name of names) {
    for (const info of interfaces[name] ?? []) {
      if (info.family === 'IPv4' && !info.internal) return { kind: 'ok', ip: info.address };
    }
  }
  return { kind: 'none', reason: `no non-internal IPv4 address among interfaces: ${names.join(', ') || '(none)'}` };
}

/**
 * Replaces `auto` in `--advertise-ip auto`, `--advertise-ip=auto` and WORKER_ADVERTISE_IP=auto with `ip`.
 * Returns new argv and env values; the inputs are not changed.
 */
export function resolveAutoAdvertise(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  ip: () => string,
): { argv: string[]; advertiseEnv: string | undefined } {
  const out = [...argv];
  for (let i = 0; i < out.length; i++) {
    if (out[i] === '--advertise-ip=auto') out[i] = `--advertise-ip=${ip()}`;
    else if (out[i] === '--advertise-ip' && out[i + 1] === 'auto') out[i + 1] = ip();
  }
  const fromEnv = env.WORKER_ADVERTISE_IP;
  return { argv: out, advertiseEnv: fromEnv?.trim().toLowerCase() === 'auto' ? ip() : fromEnv };
}
