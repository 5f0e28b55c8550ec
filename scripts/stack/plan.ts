/**
 * What `npm start` runs: the stack plan's components in its start order (`wiring.ts`), each wired to the addresses
 * its predecessors actually bound (read from their ready lines, so any listen address, port 0 included, works).
 * Everything else comes from each component's own defaults and environment variables, which the launcher passes
 * through.
 */
import { DEFAULT_ACTOR_SUFFIX } from '../../lib/actor-ref.js';
import { formatHostPort, parseHostPort } from '../../lib/address.js';
import type { Addresses } from '../../lib/launch.js';

import { STACK_ORDER, wiringFlags, type ComponentName } from './wiring.js';
import { describeFilters, type LoadedFilter } from '../../proxy/chain/loaded-filters.js';

export type { ComponentName };

export type ReadyMap = Partial<Record<ComponentName, Addresses>>;

export interface Step {
  readonly name: ComponentName;
  /** Flags derived from the components already running. */
  readonly args: (ready: ReadyMap) => string[];
}

/** A listener's address as something to dial: a wildcard bind is reached on loopback. */
export function dialable(address: string): string {
  const { host, port } = parseHostPort(address);
  if (host === '0.0.0.0') return formatHostPort('127.0.0.1', port);
  if (host === '::') return formatHostPort('::1', port);
  return formatHostPort(host, port);
}

function need(ready: ReadyMap, name: ComponentName, listener: string): string {
  const address = ready[name]?.[listener];
  if (address === undefined) throw new Error(`${name} reported no "${listener}" address in its ready line`);
  return dialable(address);
}

/** What each component dials, from the ready lines of those before it. */
function dialed(name: ComponentName, ready: ReadyMap): { apiserver?: string; extproc?: string } {
  if (name === 'extproc') return { apiserver: need(ready, 'apiserver-stub', 'grpc') };
  if (name === 'proxy') return { extproc: need(ready, 'extproc', 'grpc') };
  return {};
}

export const STEPS: readonly Step[] = Object.freeze(STACK_ORDER.map((name): Step => ({ name, args: (r) => wiringFlags(name, dialed(name, r)) })));

export interface Banner {
  readonly ingress: string;
  readonly curl: string;
  readonly lines: readonly string[];
}

/** Where the proxy's and extproc's spans go, when `OTEL_TRACES_EXPORTER=otlp` was passed to `npm start`. */
function tracingLine(env: NodeJS.ProcessEnv): string[] {
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() !== 'otlp' || (env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return [];
  const to = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${(env.OTEL_EXPORTER_OTLP_ENDPOINT || 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  return [`  tracing  proxy and extproc spans to ${to} (OTLP/HTTP JSON)`];
}

/** The user filters of the proxy's "filter chain" start-up line (`proxy-process.ts`); undefined for any other line. */
export function filterChainOf(line: string): readonly LoadedFilter[] | undefined {
  if (!line.includes('"filter chain')) return undefined;
  try {
    const filters = (JSON.parse(line) as { filters?: unknown }).filters;
    return Array.isArray(filters) ? (filters as LoadedFilter[]) : undefined;
  } catch {
    return undefined;
  }
}

/** The banner's filter line: what the proxy loaded, or how to add one. */
function filtersLine(filters: readonly LoadedFilter[] | undefined): string[] {
  if (filters === undefined) return [];
  return [`  filters  ${filters.length === 0 ? 'none (npm start -- --filter ./my-filter.js adds one)' : describeFilters(filters)}`];
}

/**
 * The egress lines: where actors' CONNECTs go, and the two commands that open a tunnel as actor-000 (whose seeded
 * policy reaches the stub's first destination): its certificate from the stub, then curl through the listener.
 * `STACK_CA_FILE`: the CA of the listener's certificate (`npm start` sets it); without it curl is told not to verify.
 */
function egressLines(ready: ReadyMap, env: NodeJS.ProcessEnv, atespace: string): string[] {
  const egress = ready.proxy?.egress;
  const stubAdmin = ready['apiserver-stub']?.admin;
  const destination = ready['apiserver-stub']?.['destination-1'];
  if (egress === undefined || stubAdmin === undefined || destination === undefined) return [];
  const listener = `https://${dialable(egress)}`;
  const verify = env.STACK_CA_FILE ? `--proxy-cacert ${env.STACK_CA_FILE}` : '--proxy-insecure';
  return [
    `  egress   ${listener} (actors' CONNECT IP:port, each with its actor certificate)`,
    `  try      curl -s -X POST 'http://${dialable(stubAdmin)}/actors/${atespace}/actor-000/certificate?format=pem' -o actor-000.pem`,
    `           curl -p -x ${listener} ${verify} --proxy-cert actor-000.pem --proxy-key actor-000.pem http://${dialable(destination)}/`,
  ];
}

/** What the launcher prints once every component is ready; `filters`: the proxy's user filters, as it logged them. */
export function banner(ready: ReadyMap, env: NodeJS.ProcessEnv, filters?: readonly LoadedFilter[]): Banner {
  const ingress = `http://${need(ready, 'proxy', 'ingress')}`;
  const suffix = env.PROXY_ACTOR_SUFFIX || env.ACTOR_SUFFIX || DEFAULT_ACTOR_SUFFIX;
  const atespace = env.APISERVER_ATESPACE || 'demo';
  const curl = `curl -H 'Host: actor-000.${atespace}.${suffix}' ${ingress}/`;
  const cache = (env.PROXY_ACTOR_CACHE || env.ACTOR_CACHE || 'on').toLowerCase();
  const stats = (name: ComponentName): string => {
    const admin = ready[name]?.admin;
    return admin === undefined ? '' : `http://${dialable(admin)}/stats (${name})`;
  };
  const lines = [
    `actor-edge is ready (actor cache: ${cache})`,
    `  ingress  ${ingress}`,
    ...(ready.proxy?.tls === undefined ? [] : [`  https    https://${dialable(ready.proxy.tls)}/ (the HTTPS listener)`]),
    `  try      ${curl}`,
    ...egressLines(ready, env, atespace),
    ...filtersLine(filters),
    `  stats    ${[stats('proxy'), stats('extproc'), stats('apiserver-stub')].filter((s) => s !== '').join('  ')}`,
    ...(ready.proxy?.admin === undefined ? [] : [`  dashboard http://${dialable(ready.proxy.admin)}/dashboard`]),
    env.STACK_TLS === 'off'
      ? `  mTLS     off: every internal hop is plaintext (npm start without --tls off turns it on)`
      : `  mTLS     on every internal hop (plaintext: npm start -- --tls off)`,
    ...tracingLine(env),
    `  stop     Ctrl-C`,
  ];
  return { ingress, curl, lines };
}
