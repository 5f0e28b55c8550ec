/**
 * What a set of NetworkPolicies (networking.k8s.io/v1) of one namespace lets through, by the API's rules: a pod
 * that no policy selects for a direction allows everything in it; a selected pod allows what at least one rule of
 * one selecting policy matches (peers and ports; a rule without `from`/`to` matches every peer, one without
 * `ports` every port). Enough to check the manifests' hops: peers are pods of this namespace (labels), pods of
 * another namespace (its labels too), or addresses outside the cluster. Ports are numbers; `endPort` ranges are
 * honoured; named ports are not used by the manifests and are refused.
 */
import type { JsonObject, JsonValue, ManifestObject } from './kustomize.js';

export type Peer =
  | { readonly kind: 'pod'; readonly labels: Readonly<Record<string, string>>; readonly namespaceLabels?: Readonly<Record<string, string>> }
  | { readonly kind: 'address'; readonly ip: string };

export interface Connection {
  readonly from: Peer;
  readonly to: Peer;
  readonly port: number;
  readonly protocol?: 'TCP' | 'UDP';
}

function obj(v: JsonValue | undefined): JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
}

function arr(v: JsonValue | undefined): JsonValue[] {
  return Array.isArray(v) ? v : [];
}

/** A label selector (matchLabels and matchExpressions In/NotIn/Exists/DoesNotExist) against labels. */
export function selects(selector: JsonValue | undefined, labels: Readonly<Record<string, string>>): boolean {
  const s = obj(selector);
  for (const [k, v] of Object.entries(obj(s.matchLabels))) if (labels[k] !== v) return false;
  for (const e of arr(s.matchExpressions).map(obj)) {
    const key = String(e.key);
    const values = arr(e.values).map(String);
    const has = key in labels;
    const ok =
      e.operator === 'In' ? has && values.includes(labels[key] as string)
      : e.operator === 'NotIn' ? !has || !values.includes(labels[key] as string)
      : e.operator === 'Exists' ? has
      : e.operator === 'DoesNotExist' ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

function ipv4(ip: string): number | undefined {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** Whether IPv4 `ip` is in `cidr` (IPv6 blocks match no IPv4 address). */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const a = ipv4(ip);
  const b = ipv4(base ?? '');
  const n = Number(bits);
  if (a === undefined || b === undefined || !Number.isInteger(n) || n < 0 || n > 32) return false;
  const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  return (a & mask) === (b & mask);
}

function peerMatches(peer: JsonObject, p: Peer): boolean {
  if (peer.ipBlock !== undefined) {
    if (p.kind !== 'address') return false;
    const block = obj(peer.ipBlock);
    return inCidr(p.ip, String(block.cidr)) && !arr(block.except).some((e) => inCidr(p.ip, String(e)));
  }
  if (p.kind !== 'pod') return false;
  if (peer.namespaceSelector === undefined) return p.namespaceLabels === undefined && selects(peer.podSelector, p.labels);
  // A namespaceSelector (with or without a podSelector) can select this namespace too: the manifests never
  // rely on that, so a pod of this namespace is matched only by a podSelector alone.
  if (p.namespaceLabels === undefined) return false;
  return selects(peer.namespaceSelector, p.namespaceLabels) && (peer.podSelector === undefined || selects(peer.podSelector, p.labels));
}

function portMatches(ports: JsonValue | undefined, port: number, protocol: string): boolean {
  if (ports === undefined) return true;
  return arr(ports).some((entry) => {
    const e = obj(entry);
    if ((e.protocol ?? 'TCP') !== protocol) return false;
    if (e.port === undefined) return true;
    if (typeof e.port !== 'number') throw new Error(`NetworkPolicy: named port "${String(e.port)}" is not supported here`);
    const end = typeof e.endPort === 'number' ? e.endPort : e.port;
    return port >= e.port && port <= end;
  });
}

function direction(policies: readonly ManifestObject[], pod: Peer, type: 'Ingress' | 'Egress', other: Peer, port: number, protocol: string): boolean {
  if (pod.kind !== 'pod' || pod.namespaceLabels !== undefined) return true; // not a pod these policies govern
  const selecting = policies.filter((np) => {
    const spec = obj(np.spec);
    const types = spec.policyTypes === undefined ? ['Ingress', ...(spec.egress === undefined ? [] : ['Egress'])] : arr(spec.policyTypes).map(String);
    return types.includes(type) && selects(spec.podSelector, pod.labels);
  });
  if (selecting.length === 0) return true;
  const field = type === 'Ingress' ? 'ingress' : 'egress';
  const peers = type === 'Ingress' ? 'from' : 'to';
  return selecting.some((np) =>
    arr(obj(np.spec)[field]).some((r) => {
      const rule = obj(r);
      const list = rule[peers];
      const peerOk = arr(list).length === 0 || arr(list).some((x) => peerMatches(obj(x), other));
      return peerOk && portMatches(rule.ports, port, protocol);
    }),
  );
}

/** Whether the namespace's policies let `c` through (egress at its source and ingress at its destination). */
export function allows(objects: readonly ManifestObject[], c: Connection): boolean {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const protocol = c.protocol ?? 'TCP';
  return direction(policies, c.from, 'Egress', c.to, c.port, protocol) && direction(policies, c.to, 'Ingress', c.from, c.port, protocol);
}

/** Whether the destination's ingress policies admit `c` (whatever the source's egress policies say). */
export function admits(objects: readonly ManifestObject[], c: Connection): boolean {
  return direction(objects.filter((o) => o.kind === 'NetworkPolicy'), c.to, 'Ingress', c.from, c.port, c.protocol ?? 'TCP');
}
