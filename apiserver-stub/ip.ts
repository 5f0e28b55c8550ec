/** IPv4 arithmetic for laying out worker addresses (base + n, carrying into the next octet). */
import net from 'node:net';
import { UsageError } from '../lib/flags.js';

export function ipv4ToInt(ip: string): number {
  if (!net.isIPv4(ip)) throw new UsageError(`expected an IPv4 address, got "${ip}"`);
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

export function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** `base` + `offset`, e.g. 127.0.1.255 + 1 = 127.0.2.0. Throws past 255.255.255.255. */
export function ipv4Add(base: string, offset: number): string {
  const n = ipv4ToInt(base) + offset;
  if (n > 0xffffffff) throw new UsageError(`worker address ${base} + ${offset} is past 255.255.255.255`);
  return intToIpv4(n);
}
