/**
 * An actor's egress policy and its verdict for one destination, as the platform defines them: one ordered, allow-only
 * list of rules per actor; the first rule that matches decides; no policy, or a policy without rules, reaches nothing
 * (deny by default). A rule matches the dialled IP (`cidrs`), any address (`all`), or the hostname the connection
 * carries (`hostnames`: the SNI of its TLS ClientHello, or the Host of its cleartext HTTP/1.1 request; patterns in
 * hostname-pattern.ts), each on its ports (a list, or all).
 *
 * A CONNECT names an IP and a port, never the hostname, so its verdict (`decideEgress`) is one of:
 * - `allow`: some `cidrs` or `all` rule matches the destination, and no `hostnames` rule on this port comes before
 *   it; `rule` is that rule;
 * - `allow` as well when `hostnames` rules on this port come before such a rule: the connection is allowed whatever
 *   hostname it carries (rules only allow), so the gateway neither waits for its first bytes nor reads them. `rule`
 *   is the first rule certain to match; an earlier hostname rule would be the first match of the connections whose
 *   hostname it matches, which changes nothing here: rules carry no effects in this gateway;
 * - `hostnames`: no `cidrs` or `all` rule matches the destination, and `hostnames` rules on this port exist: the
 *   connection is decided on its traffic. `rules` are those rules in policy order; the connection is allowed by the
 *   first whose patterns match the hostname it carries (`decideHostname`), and closed when none does, or when it
 *   carries no hostname;
 * - `deny`: no rule can match a connection to this destination.
 * Shared by the control-plane simulator (which stores policies), extproc (which decides a CONNECT) and the proxy
 * (which decides on the traffic); pure: no I/O, no clock.
 */
import net from 'node:net';
import { checkHostnamePattern, hostnameMatches } from './hostname-pattern.js';

export type EgressPorts = 'all' | readonly number[];

export type EgressRule =
  | { readonly kind: 'cidrs'; readonly cidrs: readonly string[]; readonly ports: EgressPorts }
  | { readonly kind: 'all'; readonly ports: EgressPorts }
  /** `hostnames`: the patterns, lowered (hostname-pattern.ts). */
  | { readonly kind: 'hostnames'; readonly hostnames: readonly string[]; readonly ports: EgressPorts };

export interface EgressPolicy {
  readonly rules: readonly EgressRule[];
}

/** A destination as a CONNECT names it: an IP literal and a port. */
export interface EgressDestination {
  readonly ip: string;
  readonly port: number;
}

/** A `hostnames` rule that may allow a connection to the destination it was decided for: its index and patterns. */
export interface HostnameCandidate {
  readonly rule: number;
  readonly hostnames: readonly string[];
}

export type EgressVerdict =
  | { readonly kind: 'allow'; readonly rule: number }
  | { readonly kind: 'hostnames'; readonly rules: readonly HostnameCandidate[] }
  | { readonly kind: 'deny'; readonly reason: 'no-policy' | 'no-rules' | 'no-match' };

/** A policy that was checked (`parseEgressPolicy`): each rule's CIDRs compiled once. */
export interface CheckedEgressPolicy extends EgressPolicy {
  /**
   * Per rule, whether it can match a connection to `destination`: a `cidrs` or `all` rule does match it; a
   * `hostnames` rule on a matching port can, by the hostname the connection carries.
   */
  readonly matchers: readonly ((destination: EgressDestination) => boolean)[];
}

export class EgressPolicyError extends Error {
  override readonly name = 'EgressPolicyError';
}

const MAX_RULES = 256;
const MAX_CIDRS = 1024;
const MAX_HOSTNAMES = 1024;
/** Hostname patterns of a whole policy (what one verdict may carry to the proxy stays near 1 MiB). */
const MAX_POLICY_HOSTNAMES = 4096;

function checkPorts(value: unknown, where: string): EgressPorts {
  if (value === undefined || value === 'all') return 'all';
  if (!Array.isArray(value) || value.length === 0) throw new EgressPolicyError(`${where}.ports: expected "all" or a non-empty list of ports`);
  return value.map((p, i) => {
    if (!Number.isInteger(p) || (p as number) < 1 || (p as number) > 65535) throw new EgressPolicyError(`${where}.ports[${i}]: expected a port from 1 to 65535, got ${JSON.stringify(p)}`);
    return p as number;
  });
}

/** `10.0.0.0/8`, `fd00::/8` or a lone address (a /32 or /128). */
function parseCidr(text: unknown, where: string): { readonly address: string; readonly prefix: number; readonly family: 'ipv4' | 'ipv6' } {
  if (typeof text !== 'string') throw new EgressPolicyError(`${where}: expected a CIDR such as "10.0.0.0/8"`);
  const [address = '', prefixText, extra] = text.split('/');
  const version = net.isIP(address);
  if (version === 0 || extra !== undefined) throw new EgressPolicyError(`${where}: "${text}" is not a CIDR (an IPv4 or IPv6 address, then /prefix)`);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) throw new EgressPolicyError(`${where}: "${text}" has a prefix outside 0-${max}`);
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function portMatches(ports: EgressPorts, port: number): boolean {
  return ports === 'all' || ports.includes(port);
}

/** Checks a policy as a client sent it (JSON) and compiles its rules; throws EgressPolicyError naming the field. */
export function parseEgressPolicy(value: unknown): CheckedEgressPolicy {
  const rules = (value as { rules?: unknown } | null)?.rules;
  if (typeof value !== 'object' || value === null || !Array.isArray(rules)) throw new EgressPolicyError('expected {"rules": [...]}');
  if (rules.length > MAX_RULES) throw new EgressPolicyError(`rules: at most ${MAX_RULES}`);
  const checked: EgressRule[] = [];
  const matchers: ((d: EgressDestination) => boolean)[] = [];
  let patterns = 0;
  rules.forEach((rule: unknown, i) => {
    const where = `rules[${i}]`;
    const r = rule as { kind?: unknown; cidrs?: unknown; hostnames?: unknown; ports?: unknown } | null;
    const ports = checkPorts(r?.ports, where);
    if (r?.kind === 'all') {
      checked.push({ kind: 'all', ports });
      matchers.push((d) => portMatches(ports, d.port));
      return;
    }
    if (r?.kind === 'hostnames') {
      if (!Array.isArray(r.hostnames) || r.hostnames.length === 0 || r.hostnames.length > MAX_HOSTNAMES) throw new EgressPolicyError(`${where}.hostnames: expected 1 to ${MAX_HOSTNAMES} hostname patterns`);
      patterns += r.hostnames.length;
      if (patterns > MAX_POLICY_HOSTNAMES) throw new EgressPolicyError(`${where}.hostnames: a policy has at most ${MAX_POLICY_HOSTNAMES} hostname patterns`);
      const hostnames = r.hostnames.map((h: unknown, j) => {
        const pattern = checkHostnamePattern(h);
        if (pattern === undefined) throw new EgressPolicyError(`${where}.hostnames[${j}]: ${JSON.stringify(h)} is not a hostname pattern (a DNS name, "*." and a DNS name, or "*")`);
        return pattern;
      });
      checked.push({ kind: 'hostnames', hostnames, ports });
      matchers.push((d) => portMatches(ports, d.port));
      return;
    }
    if (r?.kind !== 'cidrs') throw new EgressPolicyError(`${where}.kind: expected "cidrs", "all" or "hostnames", got ${JSON.stringify(r?.kind)}`);
    if (!Array.isArray(r.cidrs) || r.cidrs.length === 0 || r.cidrs.length > MAX_CIDRS) throw new EgressPolicyError(`${where}.cidrs: expected 1 to ${MAX_CIDRS} CIDRs`);
    const cidrs = r.cidrs.map((c, j) => parseCidr(c, `${where}.cidrs[${j}]`));
    const list = new net.BlockList();
    for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
    checked.push({ kind: 'cidrs', cidrs: r.cidrs as string[], ports });
    matchers.push((d) => portMatches(ports, d.port) && list.check(d.ip, net.isIPv6(d.ip) ? 'ipv6' : 'ipv4'));
  });
  return Object.freeze({ rules: Object.freeze(checked), matchers: Object.freeze(matchers) });
}

/** The verdict for a CONNECT to `destination`, as the header of this file defines it. */
export function decideEgress(policy: CheckedEgressPolicy | undefined, destination: EgressDestination): EgressVerdict {
  if (policy === undefined) return { kind: 'deny', reason: 'no-policy' };
  if (policy.rules.length === 0) return { kind: 'deny', reason: 'no-rules' };
  const candidates: HostnameCandidate[] = [];
  for (let i = 0; i < policy.rules.length; i++) {
    if (!(policy.matchers[i] as (d: EgressDestination) => boolean)(destination)) continue;
    const rule = policy.rules[i] as EgressRule;
    if (rule.kind !== 'hostnames') return { kind: 'allow', rule: i };
    candidates.push({ rule: i, hostnames: rule.hostnames });
  }
  return candidates.length > 0 ? { kind: 'hostnames', rules: candidates } : { kind: 'deny', reason: 'no-match' };
}

/**
 * A `hostnames` verdict decided on the traffic: the index of the first rule whose patterns match `name` (from
 * hostname-pattern.ts's `observedName`), or undefined when none does or the connection carries no name.
 */
export function decideHostname(rules: readonly HostnameCandidate[], name: string | undefined): number | undefined {
  if (name === undefined) return undefined;
  return rules.find((r) => r.hostnames.some((p) => hostnameMatches(p, name)))?.rule;
}

/**
 * A CONNECT authority as the platform requires it: an IP literal and a port (`10.1.2.3:443`, `[fd00::1]:443`),
 * never a name; undefined otherwise (the gateway answers 403 `egress denied`).
 */
export function parseIpAuthority(authority: string): EgressDestination | undefined {
  if (authority.length > 64) return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(authority);
  if (m === null) return undefined;
  const ip = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (net.isIP(ip) === 0 || (m[1] !== undefined && !net.isIPv6(ip)) || port < 1 || port > 65535) return undefined;
  return { ip, port };
}
