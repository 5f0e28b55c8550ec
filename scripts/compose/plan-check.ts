/**
 * compose.yaml against the stack plan (`scripts/stack/wiring.ts`): every component of the plan is a service that
 * runs that component, wired to the service of the component it dials (by the flag the plan names, pointing at a
 * name that service answers to), started after it (`depends_on`), with the plan's TLS variables for its hops and
 * the plan's identities. What compose adds beyond the plan (ports, limits, a SPIFFE prefix) is its own.
 */
import { parse } from 'yaml';
import type { DevCertFiles } from '../../lib/tls/dev-certs.js';
import { flagsAsEnv, SERVICES_LAYOUT, tlsEnv, wiringFlags, type PlanComponent } from '../stack/wiring.js';

interface Service {
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, unknown>>;
  readonly depends_on?: Readonly<Record<string, unknown>> | readonly string[];
  readonly networks?: Readonly<Record<string, { aliases?: readonly string[] } | null>> | readonly string[];
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

/** Where compose.yaml departs from the plan (empty: it follows it). */
export function planProblems(composeText: string): string[] {
  const services = ((parse(composeText, { merge: true }) as { services?: Record<string, Service> }).services ?? {}) as Record<string, Service>;
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
