/**
 * What a worker may receive from the proxy, checked on the header list the worker read: no internal header a
 * client sent (they all carry `FORGED` or the decoy's address), `x-ate-target-port` at most once (more only as
 * ext_proc appended them) and only as the router's own (the port of the forwarded Host, 80 when it names none) or
 * ext_proc's, none of the fields a client's Connection named (`x-fuzz-hop-*`), and only at an address the proxy
 * was told to use.
 */
import { FORGED } from './arbitraries.js';
import { FORGEABLE_HEADERS } from '../forgeable-headers.js';

export interface ForwardedHead {
  /** Where it arrived, `ip:port`. */
  readonly at: string;
  readonly rawHeaders: readonly string[];
}

export interface ForwardRules {
  /** The addresses the proxy may send to. */
  readonly upstreams: ReadonlySet<string>;
  /** Internal headers an ext_proc server set in this case (name → values), which the worker may receive. */
  readonly setByExtProc?: ReadonlyMap<string, readonly string[]>;
  /** How many times ext_proc appended each header (`append: true`): each is one more value it asked for. */
  readonly appendedByExtProc?: ReadonlyMap<string, number>;
}

const INTERNAL = new Set(FORGEABLE_HEADERS);

function portOf(host: string | undefined): string {
  const m = /:(\d+)$/.exec(host ?? '');
  return m === null ? '80' : String(Number(m[1]));
}

export function forwardedProblems(head: ForwardedHead, rules: ForwardRules, decoy: string): string[] {
  const problems: string[] = [];
  if (!rules.upstreams.has(head.at)) problems.push(`a request reached ${head.at}, which is no upstream the proxy was given`);
  const raw = head.rawHeaders;
  let host: string | undefined;
  const targetPorts: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    if (name === 'host') host ??= value;
    if (name.startsWith('x-fuzz-hop-')) problems.push(`${name} reached the worker although the client's Connection named it`);
    if (!INTERNAL.has(name)) continue;
    const fromExtProc = rules.setByExtProc?.get(name)?.includes(value) === true;
    if (value.includes(FORGED) || value.includes(decoy)) problems.push(`the client's ${name}: ${value} reached the worker`);
    else if (name === 'x-ate-target-port') targetPorts.push(value);
    else if (!fromExtProc) problems.push(`internal header ${name}: ${value} reached the worker`);
  }
  // Once, unless ext_proc itself appended more (as Envoy would pass on), every one of them its own.
  const extProcPorts = rules.setByExtProc?.get('x-ate-target-port') ?? [];
  const allowed = 1 + (rules.appendedByExtProc?.get('x-ate-target-port') ?? 0);
  const allFromExtProc = targetPorts.every((p) => extProcPorts.includes(p));
  if (targetPorts.length > allowed || (targetPorts.length > 1 && !allFromExtProc)) problems.push(`x-ate-target-port ${targetPorts.length} times: ${targetPorts.join(', ')}`);
  const expected = portOf(host);
  for (const p of targetPorts) {
    if (p !== expected && !extProcPorts.includes(p)) problems.push(`x-ate-target-port ${p}, but the forwarded Host ${JSON.stringify(host)} names port ${expected}`);
  }
  return problems;
}
