/** `host:port` parsing and formatting for listen and dial addresses (IPv6 in brackets). */
import net from 'node:net';
import { UsageError } from './flags.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Parses `host:port` or `[v6]:port`; port 0 is allowed (the OS chooses). */
export function parseHostPort(text: string, what = 'address'): HostPort {
  const m = /^(?:\[([^\]]+)\]|([^:\[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`${what}: expected HOST:PORT, got "${text}"`);
  return Object.freeze({ host: (m[1] ?? m[2]) as string, port });
}

/** Formats host and port, bracketing IPv6 literals. */
export function formatHostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The address a listening server actually bound, as `host:port`. */
export function boundAddress(server: { address(): net.AddressInfo | string | null }): string {
  const a = server.address();
  if (a === null || typeof a === 'string') throw new Error('server is not listening on TCP');
  return formatHostPort(a.address, a.port);
}
