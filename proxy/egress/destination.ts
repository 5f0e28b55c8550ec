/**
 * A CONNECT's authority as the egress listener accepts it: an IP literal and a port, at most 64 bytes
 * (`lib/egress/policy.ts` `parseIpAuthority`), never a name. The destination is normalised — the port without
 * leading zeros, an IPv6 address in its compressed lower-case form — so one address is one cache key and one
 * ext_proc authority however the actor spelled it.
 */
import { parseIpAuthority } from '../../lib/egress/policy.js';

export interface EgressDestination {
  readonly ip: string;
  readonly port: number;
  /** `IP:port`, IPv6 in brackets: the cache key's destination half and what ext_proc is sent. */
  readonly authority: string;
}

/** Undefined when `authority` is not an `IP:port` of at most 64 bytes. */
export function egressDestinationOf(authority: string): EgressDestination | undefined {
  const parsed = parseIpAuthority(authority);
  if (parsed === undefined) return undefined;
  if (!parsed.ip.includes(':')) return { ip: parsed.ip, port: parsed.port, authority: `${parsed.ip}:${parsed.port}` };
  const bracketed = new URL(`http://[${parsed.ip}]/`).hostname;
  return { ip: bracketed.slice(1, -1), port: parsed.port, authority: `${bracketed}:${parsed.port}` };
}
