/**
 * Destinations the egress gateway never dials, whatever an actor's policy allows: the ranges of
 * `--egress-never-dial` (by default the unspecified, link-local — cloud metadata at 169.254.169.254 among them —,
 * multicast and broadcast ranges, and IPv4-mapped IPv6, which would name an IPv4 address the policy judged as IPv6),
 * and the proxy's own listeners: its admin, ingress and egress ports on any address that reaches them (a listener on
 * 0.0.0.0 is reached on every address of this host, loopback included). Refused before ext_proc is asked: 403
 * `egress denied`, counted as `forbidden_destination`. Pure apart from the host's interface list, read when an
 * own listener is added.
 */
import net from 'node:net';
import os from 'node:os';

export const DEFAULT_NEVER_DIAL: readonly string[] = Object.freeze([
  '0.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  '::ffff:0:0/96',
  'fe80::/10',
  'ff00::/8',
]);

export class NeverDialError extends Error {
  override readonly name = 'NeverDialError';
}

/** How many addresses' range checks are remembered; the memo starts over when full (a bound, whatever actors send). */
export const RANGE_MEMO_ENTRIES = 4096;

function family(ip: string): 'ipv4' | 'ipv6' {
  return net.isIPv6(ip) ? 'ipv6' : 'ipv4';
}

/** Every address of this host a wildcard listener answers on: loopback and the interfaces' own. */
function hostAddresses(wildcard: 'ipv4' | 'ipv6'): string[] {
  const out = wildcard === 'ipv4' ? [] : ['::1'];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (wildcard === 'ipv6' || a.family === 'IPv4') out.push(a.address.split('%')[0] as string);
  }
  return out;
}

export class ForbiddenDestinations {
  /** One list per family: node's BlockList matches an IPv4 address against IPv4-mapped IPv6 ranges too. */
  readonly #ranges = { ipv4: new net.BlockList(), ipv6: new net.BlockList() };
  /**
   * Each address's range check, remembered: the ranges are fixed once constructed, and a BlockList check parses its
   * address into a new SocketAddress each time (a few per cent of a cached tunnel's CPU).
   */
  readonly #inRanges = new Map<string, boolean>();
  readonly #own = new Set<string>();
  /** Ports of own listeners bound to 0.0.0.0 (every IPv4 loopback address reaches them too). */
  readonly #ownLoopbackPorts = new Set<number>();

  /** `cidrs`: `--egress-never-dial`; throws NeverDialError naming the entry that is not a CIDR. */
  constructor(cidrs: readonly string[] = DEFAULT_NEVER_DIAL) {
    for (const [i, text] of cidrs.entries()) {
      const [address = '', prefixText, extra] = text.split('/');
      const version = net.isIP(address);
      const max = version === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (version === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
        throw new NeverDialError(`--egress-never-dial[${i}]: "${text}" is not a CIDR (an IPv4 or IPv6 address, then /prefix)`);
      }
      const f = version === 4 ? 'ipv4' : 'ipv6';
      this.#ranges[f].addSubnet(address, prefix, f);
    }
  }

  /** A listener of this proxy, as it bound (`host` may be a wildcard). */
  addOwnListener(host: string, port: number): void {
    if (host === '0.0.0.0' || host === '::') {
      for (const ip of hostAddresses(host === '::' ? 'ipv6' : 'ipv4')) this.#own.add(`${ip} ${port}`);
      this.#ownLoopbackPorts.add(port);
      return;
    }
    this.#own.add(`${host} ${port}`);
  }

  /** Why `ip:port` is never dialled, or undefined when the policy may decide. */
  refuses(ip: string, port: number): string | undefined {
    if (this.#inNeverDial(ip)) return `${ip} is in a range the gateway never dials (--egress-never-dial)`;
    if (this.#own.has(`${ip} ${port}`) || (this.#ownLoopbackPorts.has(port) && ip.startsWith('127.') && family(ip) === 'ipv4')) {
      return `${ip}:${port} is one of the proxy's own listeners`;
    }
    return undefined;
  }

  #inNeverDial(ip: string): boolean {
    const known = this.#inRanges.get(ip);
    if (known !== undefined) return known;
    const f = family(ip);
    const inside = this.#ranges[f].check(ip, f);
    if (this.#inRanges.size >= RANGE_MEMO_ENTRIES) this.#inRanges.clear();
    this.#inRanges.set(ip, inside);
    return inside;
  }

  /** Addresses whose range check is remembered (at most RANGE_MEMO_ENTRIES). */
  get rememberedAddresses(): number {
    return this.#inRanges.size;
  }
}
