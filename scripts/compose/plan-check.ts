/**
 * compose.yaml against the stack plan (`scripts/stack/wiring.ts`): every component of the plan is a service that
 * runs that component, wired to the service of the component it dials (by the flag the plan names, pointing at a
 * name that service answers to), started after it (`depends_on`), with the plan's TLS variables for its hops and
 * the plan's identities. What compose adds beyond the plan (ports, limits, a SPIFFE prefix) is its own.
 *
 * And what the files and the egress need (`mountProblems`, `egressProblems`): every file a service's environment
 * names under /certs is mounted into it, read-only; the development CA's key into none, the actor identity CA's key
 * only into the stub, where its --actor-ca-dir finds it; the proxy's egress listener set, serving
 * proxy-egress.pem, trusting the actor identity CA (not the workload CA) and published; the stub's destinations on
 * its own fixed address on a network the proxy joins, the first allowed to a seeded actor by the seeded policies,
 * the second not (what `npm run test:compose` connects to). Compose's `${VAR:-default}` are read as their defaults.
 */
import path from 'node:path';
import { parse } from 'yaml';
import { readStubConfig } from '../../apiserver-stub/config.js';
import { seededPolicy } from '../../apiserver-stub/egress-seed.js';
import { decideEgress, parseIpAuthority } from '../../lib/egress/policy.js';
import { ACTOR_CA_NAME } from '../../lib/tls/actor-certs.js';
import type { DevCertFiles } from '../../lib/tls/dev-certs.js';
import { flagsAsEnv, SERVICES_LAYOUT, tlsEnv, wiringFlags, type PlanComponent } from '../stack/wiring.js';

interface Service {
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, unknown>>;
  readonly depends_on?: Readonly<Record<string, unknown>> | readonly string[];
  readonly networks?: Readonly<Record<string, { aliases?: readonly string[]; ipv4_address?: string } | null>> | readonly string[];
  readonly volumes?: readonly (string | { readonly source?: string; readonly target?: string; readonly read_only?: boolean })[];
  readonly ports?: readonly (string | { readonly target?: number })[];
}

interface ComposeFile {
  readonly services?: Record<string, Service>;
}

/** The compose service(s) of each plan component. */
const SERVICES: Readonly<Record<PlanComponent, (names: readonly string[]) => string[]>> = {
  'apiserver-stub': (names) => names.filter((n) => n === 'apiserver'),
  extproc: (names) => names.filter((n) => n === 'extproc'),
  proxy: (names) => names.filter((n) => n === 'proxy'),
  worker: (names) => names.filter((n) => /^worker-\d+$/.test(n)),
};

/** What each component dials, as the plan says, and which component answers there. */
const DIALS: Readonly<Partial<Record<PlanComponent, { readonly flag: string; readonly target: PlanComponent }>>> = {
  extproc: { flag: '--apiserver', target: 'apiserver-stub' },
  proxy: { flag: '--extproc', target: 'extproc' },
  worker: { flag: '--apiserver', target: 'apiserver-stub' },
};

/** Placeholder files: only the variables' names and the identities are compared, not where compose mounts files. */
const FILES: DevCertFiles = { ca: 'ca', proxy: 'proxy', extproc: 'extproc', controlPlane: 'control-plane', ingress: 'ingress', egress: 'egress', actorCa: 'actor-ca', worker: 'worker', workers: [] };

/** The names a service answers to: its own and its network aliases. */
function namesOf(name: string, service: Service): string[] {
  const networks = service.networks;
  const aliases = networks === undefined || Array.isArray(networks) ? [] : Object.values(networks as Record<string, { aliases?: readonly string[] } | null>).flatMap((n) => n?.aliases ?? []);
  return [name, ...aliases];
}

function dependsOn(service: Service): string[] {
  const d = service.depends_on;
  if (d === undefined) return [];
  return Array.isArray(d) ? [...(d as readonly string[])] : Object.keys(d);
}

/** The value of `--flag` in a command, or of its environment variable. */
function flagValue(component: PlanComponent, service: Service, flag: string): string | undefined {
  const command = service.command ?? [];
  const i = command.indexOf(flag);
  if (i >= 0) return command[i + 1];
  const variable = Object.keys(flagsAsEnv(component, [flag, '']))[0] as string;
  const value = service.environment?.[variable];
  return typeof value === 'string' ? value : undefined;
}

/** compose.yaml as compose reads it when no variable is set: every `${VAR:-default}` (or `${VAR-default}`) its default. */
function parseCompose(composeText: string): ComposeFile {
  const text = composeText.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_, fallback: string | undefined) => fallback ?? '');
  return (parse(text, { merge: true }) ?? {}) as ComposeFile;
}

/** Where compose.yaml departs from the plan, or its files and egress from what they need (empty: it follows). */
export function planProblems(composeText: string): string[] {
  const compose = parseCompose(composeText);
  return [...wiringProblems(compose), ...mountProblems(compose), ...egressProblems(compose)];
}

function wiringProblems(compose: ComposeFile): string[] {
  const services = compose.services ?? {};
  const names = Object.keys(services);
  const problems: string[] = [];
  for (const component of Object.keys(SERVICES) as PlanComponent[]) {
    const own = SERVICES[component](names);
    if (own.length === 0) problems.push(`${component}: no service runs it`);
    for (const name of own) {
      const service = services[name];
      if (service === undefined) {
        problems.push(`${component}: no service "${name}"`);
        continue;
      }
      const verb = component === 'worker' ? 'worker' : component;
      if (service.command?.[0] !== verb) problems.push(`${name}: runs "${service.command?.[0] ?? ''}", not ${verb}`);
      const dial = DIALS[component];
      if (dial !== undefined) {
        // The plan's wiring flag for this component is the one compose must set.
        const flag = wiringFlags(component, { apiserver: 'x', extproc: 'x' })[0] as string;
        if (flag !== dial.flag) problems.push(`${component}: the plan wires it with ${flag}, this check expects ${dial.flag}`);
        const value = flagValue(component, service, flag);
        const targets = SERVICES[dial.target](names).filter((t) => services[t] !== undefined);
        const target = targets[0];
        if (value === undefined) problems.push(`${name}: no ${flag} (the plan wires ${component} to ${dial.target})`);
        else if (target !== undefined && !namesOf(target, services[target] as Service).includes(value.replace(/:\d+$/, ''))) {
          problems.push(`${name}: ${flag} ${value} is not a name of ${target}`);
        }
        if (target !== undefined && !dependsOn(service).includes(target)) problems.push(`${name}: starts without waiting for ${target} (depends_on)`);
      }
      const env = service.environment ?? {};
      for (const [variable, value] of Object.entries(tlsEnv(component, FILES, SERVICES_LAYOUT))) {
        if (!(variable in env)) problems.push(`${name}: ${variable} missing (the plan's mTLS for its hops)`);
        else if (value.startsWith('spiffe://') && env[variable] !== value) problems.push(`${name}: ${variable} is ${String(env[variable])}, the plan's identity is ${value}`);
      }
    }
  }
  return problems;
}

/** A service's bind mounts: host file (as written), path inside, and whether read-only. */
interface Mount {
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
}

function mountsOf(service: Service): Mount[] {
  return (service.volumes ?? []).flatMap((v): Mount[] => {
    if (typeof v !== 'string') return v.source !== undefined && v.target !== undefined ? [{ source: v.source, target: v.target, readOnly: v.read_only === true }] : [];
    const m = /^(.+?):(\/[^:]*)(?::([a-z,]+))?$/.exec(v);
    return m === null ? [] : [{ source: m[1] as string, target: m[2] as string, readOnly: (m[3] ?? '').split(',').includes('ro') }];
  });
}

/** The environment variable `component` reads `flag` from. */
const variableOf = (component: PlanComponent, flag: string): string => Object.keys(flagsAsEnv(component, [flag, '']))[0] as string;

/** The stub's directory of the actor identity CA, as its --actor-ca-dir (flag or variable) names it. */
function actorCaDir(service: Service): string | undefined {
  return flagValue('apiserver-stub', service, '--actor-ca-dir');
}

const CA_KEY = 'ca.key';
const ACTOR_CA_CERT = `${ACTOR_CA_NAME}.pem`;
const ACTOR_CA_KEY = `${ACTOR_CA_NAME}.key`;
/** The egress listener's serving certificate and key, as `actor-edge certs` names it. */
const EGRESS_BUNDLE = 'proxy-egress.pem';

/**
 * Every file a service's environment names under /certs is mounted into it read-only (a directory: files are
 * mounted inside it); the development CA's key is mounted into no service; the actor identity CA's key only into
 * the stub, in the directory its --actor-ca-dir names, beside the CA's certificate.
 */
export function mountProblems(compose: ComposeFile): string[] {
  const problems: string[] = [];
  for (const [name, service] of Object.entries(compose.services ?? {})) {
    const mounts = mountsOf(service);
    for (const m of mounts) if (m.target.startsWith('/certs/') && !m.readOnly) problems.push(`${name}: ${m.target} is mounted writable (certificates are mounted read-only)`);
    for (const [variable, value] of Object.entries(service.environment ?? {})) {
      if (typeof value !== 'string' || !value.startsWith('/certs/')) continue;
      if (!mounts.some((m) => m.target === value || m.target.startsWith(`${value}/`))) problems.push(`${name}: ${variable} names ${value}, which is not mounted into it`);
    }
    for (const m of mounts) {
      const file = path.posix.basename(m.source);
      if (file === CA_KEY) problems.push(`${name}: mounts the development CA's key (${m.source}); no service may`);
      if (file !== ACTOR_CA_KEY) continue;
      const dir = service.command?.[0] === 'apiserver-stub' ? actorCaDir(service) : undefined;
      if (dir === undefined) problems.push(`${name}: mounts the actor identity CA's key (${m.source}); only the stub, which mints actor certificates, may`);
      else if (m.target !== path.posix.join(dir, ACTOR_CA_KEY)) problems.push(`${name}: the actor identity CA's key is mounted at ${m.target}, not in --actor-ca-dir ${dir}`);
    }
  }
  return problems;
}

/**
 * The egress, end to end: the proxy's listener on (serving proxy-egress.pem, trusting actor-ca.pem, its port
 * published), the stub minting actor certificates (actor-ca.pem and actor-ca.key in its --actor-ca-dir) and
 * simulating destinations where the proxy can dial them, under seeded policies that allow actor-000 the first
 * destination and not the second.
 */
export function egressProblems(compose: ComposeFile): string[] {
  const services = compose.services ?? {};
  const problems: string[] = [];
  const proxyName = SERVICES.proxy(Object.keys(services))[0];
  const stubName = SERVICES['apiserver-stub'](Object.keys(services))[0];
  const proxy = proxyName === undefined ? undefined : services[proxyName];
  const stub = stubName === undefined ? undefined : services[stubName];
  if (proxy === undefined || stub === undefined || proxyName === undefined || stubName === undefined) return problems; // wiringProblems says so
  const sourceAt = (service: Service, target: string | undefined): string | undefined =>
    target === undefined ? undefined : mountsOf(service).find((m) => m.target === target)?.source;

  const listen = flagValue('proxy', proxy, '--egress-listen');
  if (listen === undefined) problems.push(`${proxyName}: no egress listener (${variableOf('proxy', '--egress-listen')})`);
  else {
    const port = Number(/:(\d+)$/.exec(listen)?.[1]);
    const published = (proxy.ports ?? []).some((p) => (typeof p === 'string' ? Number(/:(\d+)(?:\/tcp)?$/.exec(p)?.[1]) : p.target) === port);
    if (!published) problems.push(`${proxyName}: the egress listener's port ${port} is not published`);
  }
  for (const flag of ['--egress-tls-cert', '--egress-tls-key']) {
    const source = sourceAt(proxy, flagValue('proxy', proxy, flag));
    if (source === undefined || path.posix.basename(source) !== EGRESS_BUNDLE) problems.push(`${proxyName}: ${variableOf('proxy', flag)} is not the mounted ${EGRESS_BUNDLE}`);
  }
  const clientCa = sourceAt(proxy, flagValue('proxy', proxy, '--egress-client-ca'));
  if (clientCa === undefined || path.posix.basename(clientCa) !== ACTOR_CA_CERT) {
    problems.push(`${proxyName}: ${variableOf('proxy', '--egress-client-ca')} is not the mounted actor identity CA (${ACTOR_CA_CERT}), but ${clientCa ?? 'nothing mounted'}`);
  }

  const dir = actorCaDir(stub);
  if (dir === undefined) problems.push(`${stubName}: no ${variableOf('apiserver-stub', '--actor-ca-dir')} (it mints no actor certificates)`);
  else {
    for (const file of [ACTOR_CA_CERT, ACTOR_CA_KEY]) {
      const source = sourceAt(stub, path.posix.join(dir, file));
      if (source === undefined || path.posix.basename(source) !== file) problems.push(`${stubName}: ${path.posix.join(dir, file)} is not mounted from ${file}`);
    }
  }

  // The stub's own reading of its destinations and seeded policies.
  const env = Object.fromEntries(Object.entries(stub.environment ?? {}).map(([k, v]) => [k, String(v)]));
  let read;
  try {
    read = readStubConfig((stub.command ?? []).slice(1), env);
  } catch (err) {
    return [...problems, `${stubName}: its command and environment do not parse: ${(err as Error).message}`];
  }
  if (read.kind !== 'config') return problems;
  const { destinations, egressSeed } = read.config;
  if (destinations.length < 2) return [...problems, `${stubName}: simulates ${destinations.length} destination(s); the deployment needs one an actor may reach and one it may not`];
  const stubNetworks = Array.isArray(stub.networks) ? {} : (stub.networks ?? {});
  const proxyNetworks = Array.isArray(proxy.networks) ? (proxy.networks as string[]) : Object.keys(proxy.networks ?? {});
  for (const [i, d] of destinations.entries()) {
    const on = Object.entries(stubNetworks).find(([, n]) => n?.ipv4_address === d.host)?.[0];
    if (on === undefined) problems.push(`${stubName}: destination-${i + 1} ${d.host}:${d.port} is not the stub's fixed address (ipv4_address) on any network`);
    else if (!proxyNetworks.includes(on)) problems.push(`${stubName}: destination-${i + 1} is on network ${on}, which ${proxyName} does not join`);
    else if (d.port === 0) problems.push(`${stubName}: destination-${i + 1} has no fixed port`);
  }
  const verdict = (i: number) => {
    const d = destinations[i];
    const at = d === undefined ? undefined : parseIpAuthority(`${d.host}:${d.port}`);
    return at === undefined ? undefined : decideEgress(seededPolicy(egressSeed, 'actor-000'), at).kind;
  };
  if (verdict(0) !== 'allow') problems.push(`${stubName}: the seeded policies do not allow actor-000 destination-1`);
  if (verdict(1) !== 'deny') problems.push(`${stubName}: the seeded policies allow actor-000 destination-2 (it must stay refused)`);
  return problems;
}
