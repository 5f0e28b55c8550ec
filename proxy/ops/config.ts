/**
 * The ops slice of the proxy's config (the `ops` section): the access log, the number of ingress processes,
 * draining on SIGTERM and the certificate expiry warning, with their flags, composed into the proxy's flags by
 * `proxy/config.ts` (the admin listener, also part of the `ops` slice, is declared by `admin/config.ts`).
 */
import type { FlagSpecs, FlagValues } from '../../lib/flags.js';
import { certExpiryWarningFlag } from '../../lib/tls/expiry.js';
import { accessLogTarget, type AccessLogTarget } from './access-log.js';

/** The access log, shutdown and the certificate expiry warning. */
export interface OpsSettings {
  readonly accessLog: AccessLogTarget;
  /** `--drain-delay-ms`: readiness fails this long before the drain starts. */
  readonly drainDelayMs: number;
  readonly drainTimeoutMs: number;
  /** `--cert-expiry-warning-hours` (0: no warning). */
  readonly certExpiryWarningHours: number;
}

/** The access log and the number of ingress processes. */
export const OPS_FLAGS = {
  'access-log': {
    type: 'string',
    env: 'PROXY_ACCESS_LOG',
    section: 'ops',
    default: 'stdout',
    help: 'The access log, one JSON line per request, upgrade, tunnel and state-changing admin call, whatever LOG_LEVEL says: stdout (also "on"), off, or a file path (appended to; reopened on SIGUSR1 for log rotation).',
  },
  workers: { type: 'number', env: 'PROXY_WORKERS', section: 'ops', default: 1, min: 1, max: 256, help: 'Ingress processes sharing the listener (node:cluster).' },
} as const satisfies FlagSpecs;

/** Draining on SIGTERM (`--drain-idle-grace-ms` is read by the ingress, `edge/config.ts`). */
export const DRAIN_FLAGS = {
  'drain-delay-ms': {
    type: 'number',
    env: 'PROXY_DRAIN_DELAY_MS',
    section: 'ops',
    default: 0,
    help: 'On SIGTERM, how long /ready answers 503 DRAINING while the listeners still accept and serve as before (so a load balancer stops sending first); then the drain starts.',
  },
  'drain-timeout-ms': { type: 'number', env: 'PROXY_DRAIN_TIMEOUT_MS', section: 'ops', default: 10000, help: 'On SIGTERM, how long in-flight requests may take to finish.' },
  'drain-idle-grace-ms': {
    type: 'number',
    env: 'PROXY_DRAIN_IDLE_GRACE_MS',
    section: 'ops',
    default: 1000,
    help: 'On SIGTERM, how long an idle keep-alive connection stays open for one more request (answered with Connection: close); 0 closes idle connections at once.',
  },
} as const satisfies FlagSpecs;

/** The warning about a certificate the proxy loads that is about to expire. */
export const CERT_EXPIRY_FLAGS = {
  'cert-expiry-warning-hours': certExpiryWarningFlag('PROXY_CERT_EXPIRY_WARNING_HOURS', 'the proxy loads (serving, upstream, ext_proc)', 'ops'),
} as const satisfies FlagSpecs;

/** The ops settings from their flag values (`--workers` is read by the composition: it is the process's shape). */
export function buildOpsSettings(flags: FlagValues<typeof OPS_FLAGS & typeof DRAIN_FLAGS & typeof CERT_EXPIRY_FLAGS>): OpsSettings {
  return Object.freeze({
    accessLog: Object.freeze(accessLogTarget(flags['access-log'])),
    drainDelayMs: flags['drain-delay-ms'],
    drainTimeoutMs: flags['drain-timeout-ms'],
    certExpiryWarningHours: flags['cert-expiry-warning-hours'],
  });
}
