/**
 * The admin's slice of the proxy's config (the `admin` section): where the admin API listens, its token, and how
 * `/ready` checks the resolver (`resolver-health.ts`), with their flags, composed into the proxy's flags by
 * `proxy/config.ts`.
 */
import type { FlagSpecs, FlagValues } from '../../lib/flags.js';
import { parseHostPort, type HostPort } from '../../lib/address.js';

/** The admin listener and its token (part of the proxy config's `ops` slice). */
export interface AdminConfig {
  readonly admin: HostPort;
  /** `--admin-token`; undefined: state-changing calls are not authenticated. */
  readonly adminToken: string | undefined;
}

/** `--health-check-interval-ms`, `--health-check-timeout-ms`: the proxy config's `healthCheck` slice. */
export interface HealthCheckConfig {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** The admin listener and its token. */
export const ADMIN_FLAGS = {
  admin: { type: 'string', env: 'PROXY_ADMIN', section: 'admin', key: 'listen', default: '127.0.0.1:9901', help: 'Admin listener HOST:PORT (/ready, /stats, /metrics).' },
  'admin-token': { type: 'string?', env: 'PROXY_ADMIN_TOKEN', section: 'admin', key: 'token', secret: true, help: 'When set, every admin call but /ready and /live needs "Authorization: Bearer <token>" (a browser: Basic, the token as the password).' },
} as const satisfies FlagSpecs;

/** `/ready`'s gRPC health check of the resolver. */
export const HEALTH_CHECK_FLAGS = {
  'health-check-interval-ms': {
    type: 'number',
    env: 'PROXY_HEALTH_CHECK_INTERVAL_MS',
    section: 'admin',
    default: 1000,
    min: 100,
    max: 60000,
    help: 'How often /ready checks the resolver (the ext_proc server, or the control plane with --resolver apiserver) with a gRPC health check.',
  },
  'health-check-timeout-ms': {
    type: 'number',
    env: 'PROXY_HEALTH_CHECK_TIMEOUT_MS',
    section: 'admin',
    default: 1000,
    min: 50,
    max: 60000,
    help: 'A health check not answered within this time fails; two failures in a row make /ready answer 503.',
  },
} as const satisfies FlagSpecs;

/** The admin listener and its token from their flag values. */
export function buildAdminConfig(flags: FlagValues<typeof ADMIN_FLAGS>): AdminConfig {
  return Object.freeze({ admin: parseHostPort(flags.admin, '--admin'), adminToken: flags['admin-token'] });
}

/** The `healthCheck` slice from its flag values. */
export function buildHealthCheckConfig(flags: FlagValues<typeof HEALTH_CHECK_FLAGS>): HealthCheckConfig {
  return Object.freeze({ intervalMs: flags['health-check-interval-ms'], timeoutMs: flags['health-check-timeout-ms'] });
}
