/**
 * The one stack plan: which components make a stack, in which order they start, the flags that wire each to the
 * ones before it, and the TLS material of every hop. `npm start` (`launcher.ts`), `npm run fleet`, the bench's
 * stacks and the tests' harness (`proxy/testing/stack.ts`) all build their components' flags from here, in-process
 * or as processes; compose (`compose.yaml`) is checked against it (`compose/plan-check.test.ts`), so none can drift.
 *
 * TLS is declared once, as flags (`tlsFlags`); the environment form a launcher or compose passes instead
 * (`tlsEnv`) is derived from each component's own flag declarations, so the two forms cannot disagree.
 */
import path from 'node:path';
import { devIdentities, type DevCertFiles } from '../../lib/tls/dev-certs.js';
import type { FlagSpecs } from '../../lib/flags.js';
import { PROXY_FLAGS } from '../../proxy/config.js';
import { EXTPROC_FLAGS } from '../../extproc/config.js';
import { STUB_FLAGS } from '../../apiserver-stub/config.js';
import { WORKER_FLAGS } from '../../apiserver-stub/worker/config.js';

/** The stack's components, in start order (a standalone `worker` attaches to the stub; compose runs them so). */
export const STACK_ORDER = Object.freeze(['apiserver-stub', 'extproc', 'proxy'] as const);
export type ComponentName = (typeof STACK_ORDER)[number];
/** Every component a plan can hold: the stack's three and standalone workers. */
export type PlanComponent = ComponentName | 'worker';

/** What a component dials, once the ones before it are up. */
export interface Dialed {
  /** The stub's control API (extproc resolves through it; a worker attaches to it). */
  readonly apiserver?: string;
  /** extproc's gRPC listener (the proxy's ext_proc). */
  readonly extproc?: string;
  /** The port the stub's workers serve on (extproc publishes it as the route's port). */
  readonly workerPort?: number;
}

/** The flags that wire `component` to the components before it. */
export function wiringFlags(component: PlanComponent, dialed: Dialed): string[] {
  const need = (value: string | undefined, what: string): string => {
    if (value === undefined) throw new Error(`${component} needs ${what} to start`);
    return value;
  };
  switch (component) {
    case 'apiserver-stub':
      return [];
    case 'extproc':
      return ['--apiserver', need(dialed.apiserver, 'the control plane'), ...(dialed.workerPort === undefined ? [] : ['--worker-port', String(dialed.workerPort)])];
    case 'proxy':
      return ['--extproc', need(dialed.extproc, 'extproc')];
    case 'worker':
      return ['--apiserver', need(dialed.apiserver, 'the control plane')];
  }
}

/** The name the control plane's development certificate carries (it listens on loopback). */
export const CONTROL_PLANE_NAME = 'localhost';

/** Where a stack runs: on loopback (one machine) or as services that dial each other by name (compose, Kubernetes). */
export interface TlsLayout {
  /** The stub serves workers in its own process (loopback stacks); false: workers are components of their own. */
  readonly inProcessWorkers: boolean;
  /** The control plane is dialed by an address its certificate does not name (loopback): extproc names it. */
  readonly loopback: boolean;
}

export const LOOPBACK_LAYOUT: TlsLayout = Object.freeze({ inProcessWorkers: true, loopback: true });
export const SERVICES_LAYOUT: TlsLayout = Object.freeze({ inProcessWorkers: false, loopback: false });

/**
 * mTLS on every hop, as `component`'s flags: the stub's control API (and its in-process workers), extproc → control
 * plane, proxy → extproc (each side accepting only the other's identity), proxy → workers.
 */
export function tlsFlags(component: PlanComponent, files: DevCertFiles, layout: TlsLayout = LOOPBACK_LAYOUT): string[] {
  const ids = devIdentities();
  switch (component) {
    case 'apiserver-stub':
      return [
        '--tls-credential-bundle', files.controlPlane,
        '--tls-client-ca', files.ca,
        ...(layout.inProcessWorkers
          ? ['--worker-tls-credential-bundle', files.worker, '--worker-tls-client-ca', files.ca, '--worker-tls-client-identity', ids.proxy]
          : []),
      ];
    case 'extproc':
      return [
        '--apiserver-ca', files.ca,
        '--apiserver-credential-bundle', files.extproc,
        ...(layout.loopback ? ['--apiserver-server-name', CONTROL_PLANE_NAME] : []),
        ...extprocListenTlsFlags(files),
      ];
    case 'proxy':
      return ['--upstream-credential-bundle', files.proxy, '--upstream-trust-bundle', files.ca, ...proxyExtprocTlsFlags(files)];
    case 'worker':
      return ['--tls-credential-bundle', files.worker, '--tls-client-ca', files.ca, '--tls-client-identity', ids.proxy];
  }
}

/** extproc's side of the ext_proc hop alone: its listener serves mTLS and accepts only the proxy's identity. */
export function extprocListenTlsFlags(files: DevCertFiles): string[] {
  return ['--tls-credential-bundle', files.extproc, '--tls-client-ca', files.ca, '--tls-client-spiffe-id', devIdentities().proxy];
}

/** The proxy's side of the ext_proc hop alone: its client certificate, and extproc checked by its SPIFFE ID. */
export function proxyExtprocTlsFlags(files: DevCertFiles): string[] {
  return ['--extproc-credential-bundle', files.proxy, '--extproc-trust-bundle', files.ca, '--extproc-spiffe-id', devIdentities().extproc];
}

const FLAGS: Readonly<Record<PlanComponent, FlagSpecs>> = { 'apiserver-stub': STUB_FLAGS, extproc: EXTPROC_FLAGS, proxy: PROXY_FLAGS, worker: WORKER_FLAGS };

/** `flags` (`--name value` pairs) of `component` as the environment variables its flag declarations name. */
export function flagsAsEnv(component: PlanComponent, flags: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (let i = 0; i < flags.length; i += 2) {
    const name = (flags[i] as string).replace(/^--/, '');
    const spec = FLAGS[component][name];
    if (spec === undefined) throw new Error(`${component} has no flag --${name}`);
    env[spec.env] = flags[i + 1] as string;
  }
  return env;
}

/** mTLS on every hop, as `component`'s environment variables (what `npm start` and compose pass). */
export function tlsEnv(component: PlanComponent, files: DevCertFiles, layout: TlsLayout = LOOPBACK_LAYOUT): Record<string, string> {
  return flagsAsEnv(component, tlsFlags(component, files, layout));
}

/**
 * The local stack's egress (`npm start` with its certificates): the proxy's egress listener with the development
 * serving certificate, trusting the actor identity CA; the stub mints actor certificates from that CA and simulates
 * two destinations outside the platform, on loopback addresses nothing else uses. actor-000 may reach the first,
 * actor-001 both, every other seeded actor nothing (no policy: deny by default).
 */
export const LOCAL_EGRESS = Object.freeze({
  listen: '127.0.0.1:9443',
  destinations: Object.freeze(['127.0.0.2:9701', '127.0.0.3:9702']),
  policies: Object.freeze({
    'actor-000': { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.2/32'], ports: 'all' }] },
    'actor-001': { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.2/32', '127.0.0.3/32'], ports: 'all' }] },
  }),
});

/** The egress part of the local stack, as `component`'s flags (the stub's and the proxy's; nothing for others). */
export function egressFlags(component: PlanComponent, files: DevCertFiles): string[] {
  switch (component) {
    case 'apiserver-stub':
      return [
        '--actor-ca-dir', path.dirname(files.actorCa),
        '--destinations', LOCAL_EGRESS.destinations.join(','),
        '--seed-egress-policies', JSON.stringify(LOCAL_EGRESS.policies),
      ];
    case 'proxy':
      return ['--egress-listen', LOCAL_EGRESS.listen, '--egress-tls-cert', files.egress, '--egress-tls-key', files.egress, '--egress-client-ca', files.actorCa];
    default:
      return [];
  }
}

/** The egress part of the local stack as environment variables (what `npm start` passes; a variable set wins). */
export function egressEnv(files: DevCertFiles): Record<string, string> {
  return { ...flagsAsEnv('apiserver-stub', egressFlags('apiserver-stub', files)), ...flagsAsEnv('proxy', egressFlags('proxy', files)) };
}
