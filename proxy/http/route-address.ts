/** Route addresses are literal `ip:port` strings (IPv6 in brackets), as Envoy's ORIGINAL_DST cluster requires. */
import net from 'node:net';

const ADDRESS = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):([0-9]{1,5})$/;

/** True for a literal IPv4 `a.b.c.d:port` or IPv6 `[v6]:port` with a port in 1-65535; never a name. */
export function isLiteralAddress(address: string): boolean {
  const m = ADDRESS.exec(address);
  if (!m) return false;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return false;
  return m[1] !== undefined ? net.isIPv6(m[1]) : net.isIPv4(m[2] as string);
}
