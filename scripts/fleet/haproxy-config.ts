/**
 * The HAProxy 2.6 configuration in front of a fleet of proxy replicas, in one of three modes:
 *
 * - `affinity` (HTTP mode): `balance hdr(host)` with `hash-type consistent` (one replica joining or leaving moves
 *   about 1/N of the actors, where the default map-based hash would move most) and a `hash-balance-factor` bound
 *   (no replica takes more than that share of the average load, whatever an actor's popularity). Each actor's
 *   requests meet one replica's cache, so one ResumeActor per actor per TTL serves the whole fleet.
 * - `sni` (TCP mode, TLS passthrough): the ClientHello's SNI is hashed the same way (`balance hash req.ssl_sni`);
 *   TLS ends at the replica, which answers a coalesced request for another actor 421 (`--misdirected-421 on`).
 * - `roundrobin` (HTTP mode): no affinity, the comparison: every replica learns every actor.
 *
 * In every mode each server has an explicit `id` (several HAProxy instances with the same servers map keys
 * alike), is health-checked on its admin `/ready` (a draining replica fails it before it closes its listener),
 * and is also marked down after a few failed connects (`observe layer4`). In HTTP mode `option redispatch 1`
 * sends every retry to another server, and `retry-on` retries a failed connect (nothing was sent), an empty
 * response (the connection closed before any byte came back: a replica killed mid-request) and a response
 * timeout — the last two only for GET, HEAD and OPTIONS: `http-request disable-l7-retry` keeps a non-idempotent
 * request from being sent twice (the fleet benchmark counts duplicate deliveries at the workers to prove it).
 * HAProxy overwrites the forwarding headers a client could forge (the replicas trust one hop).
 *
 * Servers not yet in the fleet (room to scale up) are declared `disabled` and brought in with the runtime API's
 * `enable server` (`haproxy-runtime.ts`), so a scale-up needs no reload.
 */
import { formatHostPort, type HostPort } from '../../lib/address.js';

export const FLEET_MODES = ['affinity', 'roundrobin', 'sni'] as const;
export type FleetMode = (typeof FLEET_MODES)[number];

/** The backend's name in every mode (the runtime API addresses servers as `replicas/<name>`). */
export const BACKEND = 'replicas';
/** The response header naming the replica that answered (HTTP modes). */
export const REPLICA_HEADER = 'x-fleet-replica';

export interface HaproxyServer {
  /** `r1`, `r2`, ... */
  readonly name: string;
  /** HAProxy's server `id`, fixed so another instance hashes alike. */
  readonly id: number;
  /** The replica's ingress (HTTP modes) or HTTPS listener (`sni`). */
  readonly address: HostPort;
  /** The port of the replica's admin listener, where `/ready` is checked (same host). */
  readonly checkPort: number;
  /** False: declared in maintenance (`disabled`), to be enabled when the fleet scales up. */
  readonly enabled: boolean;
}

export interface HealthCheck {
  readonly interMs: number;
  /** Failed checks before a server is marked down. */
  readonly fall: number;
  /** Passed checks before it is marked up again. */
  readonly rise: number;
}

export interface HaproxyPlan {
  readonly mode: FleetMode;
  /** Where clients connect. */
  readonly listen: HostPort;
  readonly servers: readonly HaproxyServer[];
  /** The runtime API's unix socket. */
  readonly statsSocket: string;
  /** An HTML stats page, when set. */
  readonly statsPage?: HostPort;
  readonly health: HealthCheck;
  /** `hash-balance-factor` of the hashing modes (percent of the average concurrent load a server may take). */
  readonly hashBalanceFactor: number;
  /** Attempts after the first (each on another server). */
  readonly retries: number;
  readonly connectTimeoutMs: number;
  /** Idle client and server timeouts (and the response timeout). */
  readonly idleTimeoutMs: number;
  /** One log line per request (HTTP modes) or connection (`sni`) on HAProxy's stderr. */
  readonly log?: boolean;
}

export const DEFAULT_HEALTH: HealthCheck = Object.freeze({ interMs: 250, fall: 2, rise: 2 });

/** The defaults behind `npm run fleet` and the benchmark: a plan minus what depends on the ports. */
export const PLAN_DEFAULTS = Object.freeze({
  health: DEFAULT_HEALTH,
  // 300: in the fleet benchmark (8 clients, 2 cores) a bound of 200 already sends a hashing mode's requests
  // elsewhere often enough to cost about half a ResumeActor per actor per TTL more; see docs/replicas.md.
  hashBalanceFactor: 300,
  retries: 3,
  connectTimeoutMs: 1000,
  idleTimeoutMs: 60_000,
});

/** Safe methods: the only ones HAProxy may send again after they reached a replica. */
const SAFE_METHODS = 'GET HEAD OPTIONS';

function serverLine(s: HaproxyServer): string {
  return `    server ${s.name} ${formatHostPort(s.address.host, s.address.port)} id ${s.id} check port ${s.checkPort}${s.enabled ? '' : ' disabled'}`;
}

function checkLines(plan: HaproxyPlan): string[] {
  const h = plan.health;
  return [
    '    option httpchk GET /ready',
    '    http-check expect status 200',
    `    default-server inter ${h.interMs}ms fall ${h.fall} rise ${h.rise} observe layer4 error-limit 3 on-error mark-down`,
    '    option redispatch 1',
    `    retries ${plan.retries}`,
  ];
}

function balanceLines(plan: HaproxyPlan): string[] {
  switch (plan.mode) {
    case 'affinity':
      return ['    balance hdr(host)', '    hash-type consistent', `    hash-balance-factor ${plan.hashBalanceFactor}`];
    case 'sni':
      return ['    balance hash req.ssl_sni,lower', '    hash-type consistent', `    hash-balance-factor ${plan.hashBalanceFactor}`];
    case 'roundrobin':
      return ['    balance roundrobin'];
  }
}

function httpFrontend(plan: HaproxyPlan): string[] {
  return [
    'frontend fleet',
    '    mode http',
    `    bind ${formatHostPort(plan.listen.host, plan.listen.port)}`,
    '    option forwardfor',
    // The replicas trust one hop (--xff-trusted-hops 1): nothing a client sent may pass for HAProxy's word.
    '    http-request set-header X-Forwarded-Proto http',
    '    http-request del-header Forwarded',
    '    http-request del-header X-Forwarded-Host',
    '    http-request del-header X-Real-IP',
    `    default_backend ${BACKEND}`,
    '',
    `backend ${BACKEND}`,
    '    mode http',
    ...balanceLines(plan),
    ...checkLines(plan),
    '    retry-on conn-failure empty-response response-timeout',
    `    http-request disable-l7-retry unless { method ${SAFE_METHODS} }`,
    `    http-response set-header ${REPLICA_HEADER} %s`,
  ];
}

function tcpFrontend(plan: HaproxyPlan): string[] {
  return [
    'frontend fleet',
    '    mode tcp',
    `    bind ${formatHostPort(plan.listen.host, plan.listen.port)}`,
    // Wait for the ClientHello so its SNI can be hashed.
    '    tcp-request inspect-delay 5s',
    '    tcp-request content accept if { req.ssl_hello_type 1 }',
    `    default_backend ${BACKEND}`,
    '',
    `backend ${BACKEND}`,
    '    mode tcp',
    ...balanceLines(plan),
    ...checkLines(plan),
  ];
}

/** The whole configuration file for `plan`. */
export function haproxyConfig(plan: HaproxyPlan): string {
  if (plan.servers.length === 0) throw new Error('haproxy: a fleet needs at least one server');
  const names = new Set(plan.servers.map((s) => s.name));
  const ids = new Set(plan.servers.map((s) => s.id));
  if (names.size !== plan.servers.length || ids.size !== plan.servers.length) throw new Error('haproxy: server names and ids must be unique');
  const idle = `${plan.idleTimeoutMs}ms`;
  const lines = [
    `# actor-edge fleet: ${plan.mode} (generated)`,
    'global',
    `    stats socket ${plan.statsSocket} mode 600 level admin`,
    '    maxconn 4096',
    ...(plan.log ? ['    log stderr format raw local0 info'] : []),
    '',
    'defaults',
    ...(plan.log ? ['    log global', plan.mode === 'sni' ? '    option tcplog' : '    option httplog'] : []),
    `    timeout connect ${plan.connectTimeoutMs}ms`,
    `    timeout client ${idle}`,
    `    timeout server ${idle}`,
    '    timeout http-keep-alive 10s',
    '    timeout check 1s',
    '',
    ...(plan.mode === 'sni' ? tcpFrontend(plan) : httpFrontend(plan)),
    ...plan.servers.map(serverLine),
  ];
  if (plan.statsPage !== undefined) {
    lines.push('', 'listen stats', '    mode http', `    bind ${formatHostPort(plan.statsPage.host, plan.statsPage.port)}`, '    stats enable', '    stats uri /', '    stats refresh 2s');
  }
  return lines.join('\n') + '\n';
}
