/**
 * An actor's egress policy and its verdict for one destination, as the platform defines them: one ordered, allow-only
 * list of rules per actor; the first rule that matches decides; no policy, or a policy without rules, reaches nothing
 * (deny by default). A rule matches the dialled IP (`cidrs`) or any address (`all`), on its ports (a list, or all).
 * Shared by the control-plane simulator (which stores policies) and extproc (which decides a CONNECT); pure: no I/O,
 * no clock. Hostname rules, decided on the tunnelled traffic itself, are not part of this model yet.
 */
import net from 'node:net';

export type EgressPorts = 'all' | readonly number[];

export type EgressRule =
  | { readonly kind: 'cidrs'; readonly cidrs: readonly string[]; readonly ports: EgressPorts }
  | { readonly kind: 'all'; readonly ports: EgressPorts };

export interface EgressPolicy {
  readonly rules: readonly EgressRule[];
}

/** A destination as a CONNECT names it: an IP literal and a port. */
export interface EgressDestination {
  readonly ip: string;
  readonly port: number;
}

export type EgressVerdict =
  | { readonly kind: 'allow'; readonly rule: number }
  | { readonly kind: 'deny'; readonly reason: 'no-policy' | 'no-rules' | 'no-match' };

/** A policy that was checked (`parseEgressPolicy`): each rule's CIDRs compiled once. */
export interface CheckedEgressPolicy extends EgressPolicy {
  readonly matchers: readonly ((destination: EgressDestination) => boolean)[];
}

export class EgressPolicyError extends Error {
  override readonly name = 'EgressPolicyError';
}

const MAX_RULES = 256;
const MAX_CIDRS = 1024;

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
  rules.forEach((rule: unknown, i) => {
    const where = `rules[${i}]`;
    const r = rule as { kind?: unknown; cidrs?: unknown; ports?: unknown } | null;
    const ports = checkPorts(r?.ports, where);
    if (r?.kind === 'all') {
      checked.push({ kind: 'all', ports });
      matchers.push((d) => portMatches(ports, d.port));
      return;
    }
    if (r?.kind !== 'cidrs') throw new EgressPolicyError(`${where}.kind: expected "cidrs" or "all", got ${JSON.stringify(r?.kind)}`);
    if (!Array.isArray(r.cidrs) || r.cidrs.length === 0 || r.cidrs.length > MAX_CIDRS) throw new EgressPolicyError(`${where}.cidrs: expected 1 to ${MAX_CIDRS} CIDRs`);
    const cidrs = r.cidrs.map((c, j) => parseCidr(c, `${where}.cidrs[${j}]`));
    const list = new net.BlockList();
    for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
    checked.push({ kind: 'cidrs', cidrs: r.cidrs as string[], ports });
    matchers.push((d) => portMatches(ports, d.port) && list.check(d.ip, net.isIPv6(d.ip) ? 'ipv6' : 'ipv4'));
  });
  return Object.freeze({ rules: Object.freeze(checked), matchers: Object.freeze(matchers) });
}

/** The verdict for `destination`: the first rule that matches allows it; otherwise, and without rules, denied. */
export function decideEgress(policy: CheckedEgressPolicy | undefined, destination: EgressDestination): EgressVerdict {
  if (policy === undefined) return { kind: 'deny', reason: 'no-policy' };
  if (policy.rules.length === 0) return { kind: 'deny', reason: 'no-rules' };
  const rule = policy.matchers.findIndex((matches) => matches(destination));
  return rule === -1 ? { kind: 'deny', reason: 'no-match' } : { kind: 'allow', rule };
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
