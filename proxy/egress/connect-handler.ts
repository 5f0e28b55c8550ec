/**
 * What the egress listener does with one request, in this order (reference §3, the plan's wire facts):
 * 1. any method but CONNECT: 405 `method not allowed` (`Allow: CONNECT`);
 * 2. the proxy draining: 503 `proxy draining`;
 * 3. the connection's client certificate refused (checked once per connection; past its NotAfter since): 403
 *    `invalid actor certificate` — never sent to ext_proc, never cached;
 * 4. an authority that is not `IP:port`, or longer than 64 bytes, or a destination never dialled (the proxy's own
 *    listeners, `--egress-never-dial`: `forbidden-destinations.ts`): 403 `egress denied` — never sent to ext_proc;
 * 5. the actor already holding `--egress-max-tunnels-per-actor` places (tunnels open and CONNECTs being decided):
 *    429 `too many tunnels for this actor`;
 * 6. the decider (the verdict cache, or none) with the slow path, one ext_proc stream: a denial is answered with its
 *    status and body (a `cancelled` verdict this CONNECT shared with one whose actor left is asked for once more);
 * 7. allowed: the CONNECT joins its key's grant (`grants.ts`: the lease that allowed it, re-validated ahead of its
 *    expiry), the destination is dialled within `--egress-connect-timeout-ms` (502 `destination unreachable`
 *    otherwise), then 200 and the tunnel, which the grant closes when it ends (a grant that ended during the dial:
 *    the CONNECT is refused as its end says, `revocation.ts`).
 * 8. to be decided on the traffic (only hostname rules may allow the destination): 200 at once, then the actor's
 *    first bytes are read (`hostname-gate.ts`: within `--egress-sni-timeout-ms` and `--egress-sni-max-bytes`) for
 *    the SNI of its ClientHello or the Host of its request. A name a rule matches: the destination is dialled (only
 *    now), the bytes read are forwarded untouched, and the tunnel goes on as any other. It holds its key's grant
 *    from the 200 on (with the lease of its verdict and the rules it is read against, then the hostname they
 *    allowed, which every fresher verdict checks again: `grants.ts`). Otherwise the actor's side is closed
 *    (HTTP/1.1: its connection destroyed; HTTP/2: RST_STREAM CONNECT_ERROR), counted by reason (`hostname_refused`);
 *    a destination that cannot be dialled then is closed the same way (`unreachable`), and one whose grant ended (or
 *    whose name fresher rules no longer allow) during the read or the dial as the end says.
 * An actor that goes away while its CONNECT is decided or dialled cancels both. Everything runs inside the
 * containment boundary (`egress-connect`; the tunnel's events: `egress-tunnel`): a throw ends this CONNECT alone
 * (500 when nothing was answered yet). Each CONNECT is one access-log line (`msg: "egress"`), written when it is
 * refused, or when its tunnel closes (with who closed it, a revocation included, and the lease that granted it).
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ContainedOwner } from '../../lib/containment.js';
import type { AccessLog } from '../ops/access-log.js';
import type { ProxyContainment } from '../ops/containment.js';
import type { ActorCertificateCheck } from '../../lib/egress/actor-certificate.js';
import type { HostnameCandidate } from '../../lib/egress/policy.js';
import { leaseFor, type EgressCacheUse, type EgressDecider } from './egress-decider.js';
import { egressDestinationOf } from './destination.js';
import type { ForbiddenDestinations } from './forbidden-destinations.js';
import { Departure } from './departure.js';
import { dial } from './dial.js';
import { EGRESS_CONNECT_OUTCOMES, type EgressBytes, type EgressCloseReason, type EgressConnectOutcome, type EgressRefusal, type EgressStats } from './egress-stats.js';
import type { AcceptedConnect, EgressConnection, EgressRequest } from './egress-request.js';
import type { EgressAnswer, EgressQuestion } from './extproc-egress.js';
import type { EgressKey, EgressVerdict, Lease } from './verdict-cache.js';
import { readHostname, type HostnameLimits } from './hostname-gate.js';
import type { EgressGrants, GrantEnd, GrantHold, GrantQuestion } from './grants.js';
import { revokedAnswerOf } from './revocation.js';
import { EgressTunnel, type TunnelHooks, type TunnelLimits } from './tunnel.js';
import type { ActorPlace, EgressTunnels } from './tunnels.js';

export const INVALID_CERTIFICATE_BODY = 'invalid actor certificate';
export const EGRESS_DENIED_BODY = 'egress denied';
export const TOO_MANY_TUNNELS_BODY = 'too many tunnels for this actor';
export const UNREACHABLE_BODY = 'destination unreachable';

/** The longest authority an access-log line carries (a longer one is cut, with `…`). */
const LOGGED_AUTHORITY_CHARS = 128;
/** The longest hostname an access-log line carries (a DNS name has at most 253). */
const LOGGED_HOSTNAME_CHARS = 253;

export interface ConnectHandlerDeps {
  readonly limits: TunnelLimits & { readonly connectTimeoutMs: number };
  /** A tunnel decided on its traffic: how long and how many bytes its first bytes may take. */
  readonly hostnameLimits: HostnameLimits;
  readonly decider: EgressDecider;
  /** The slow path: one ext_proc stream; `gone` cancels it. */
  readonly slowPath: (q: EgressQuestion, gone: AbortSignal) => Promise<EgressAnswer>;
  readonly tunnels: EgressTunnels;
  /** The grants of this process: every allowed CONNECT holds its key's until it is over. */
  readonly grants: Pick<EgressGrants, 'hold'>;
  readonly stats: EgressStats;
  readonly guard: ProxyContainment;
  readonly log: Logger;
  readonly accessLog?: AccessLog | undefined;
  /** Wall clock (ms) for certificate validity. */
  readonly now: () => number;
  /** What is never dialled, whatever a policy allows (`forbidden-destinations.ts`). */
  readonly forbidden: ForbiddenDestinations;
}

/** One CONNECT's record, for its counters and its access-log line. */
interface ConnectRecord {
  readonly request: EgressRequest;
  readonly startedAt: number;
  actor: string | undefined;
  destination: string | undefined;
  cache: EgressCacheUse | undefined;
  detail: string | undefined;
  /** Decided on the traffic: the SNI or Host the actor sent. */
  hostname: string | undefined;
  place: ActorPlace | undefined;
  /** Its part in its key's grant, from its allow on. */
  hold: GrantHold | undefined;
  tunnel: EgressTunnel | undefined;
  /** Counted and (without a tunnel) logged. */
  finished: boolean;
}

/** The connection's check, now: a certificate that was valid when the connection began may have expired since. */
export function checkNow(connection: EgressConnection, nowMs: number): ActorCertificateCheck {
  const check = connection.check;
  if (check.kind === 'actor' && nowMs > check.notAfterMs) return { kind: 'refused', reason: 'expired', detail: 'expired since the connection began' };
  return check;
}

const isCancelled = (v: EgressVerdict): boolean => v.kind === 'deny' && v.outcome === 'cancelled';

/** What an allowed CONNECT's part in its key's grant is made of (`EgressGrants.hold`). */
interface GrantTerms {
  readonly key: EgressKey;
  readonly certNotAfterMs: number;
  readonly question: GrantQuestion;
  readonly lease: Lease;
}

function outcomeOf(name: string): EgressConnectOutcome {
  return (EGRESS_CONNECT_OUTCOMES as readonly string[]).includes(name) ? (name as EgressConnectOutcome) : 'denied';
}

export class EgressConnectHandler {
  readonly #hooks: TunnelHooks;

  constructor(private readonly deps: ConnectHandlerDeps) {
    this.#hooks = {
      contained: (tunnel, fn) => deps.guard.wrap('egress-tunnel', { fail: () => tunnel.close('internal') }, fn),
      closed: (tunnel, reason, bytes, durationMs) => this.#tunnelClosed(tunnel, reason, bytes, durationMs),
    };
  }

  /** Handles one request on the egress listener, inside the containment boundary. */
  handle(request: EgressRequest): void {
    const rec: ConnectRecord = {
      request,
      startedAt: performance.now(),
      actor: undefined,
      destination: undefined,
      cache: undefined,
      detail: undefined,
      hostname: undefined,
      place: undefined,
      hold: undefined,
      tunnel: undefined,
      finished: false,
    };
    this.deps.guard.run('egress-connect', this.#owner(rec), () => this.#handle(rec));
  }

  #owner(rec: ConnectRecord): ContainedOwner {
    return {
      fail: () => {
        if (rec.tunnel !== undefined) return rec.tunnel.close('internal');
        const answered = rec.request.answered;
        if (answered) rec.request.destroy();
        else rec.request.refuse(500, 'internal error');
        this.#finish(rec, 'internal', 500);
      },
    };
  }

  async #handle(rec: ConnectRecord): Promise<void> {
    const { request } = rec;
    const { tunnels, decider, limits } = this.deps;
    if (request.method !== 'CONNECT') return this.#refuse(rec, 'method', 'method_not_allowed', 405, 'method not allowed', { allow: 'CONNECT' });
    if (tunnels.draining) return this.#refuse(rec, 'draining', 'draining', 503, 'proxy draining');
    const check = checkNow(request.connection, this.deps.now());
    if (check.kind === 'refused') {
      this.deps.stats.tallies.certificateRefusals[check.reason]++;
      rec.detail = `${check.reason}: ${check.detail}`;
      return this.#refuse(rec, 'certificate', 'invalid_certificate', 403, INVALID_CERTIFICATE_BODY);
    }
    rec.actor = `${check.actor.atespace}/${check.actor.name}`;
    const destination = egressDestinationOf(request.authority);
    if (destination === undefined) return this.#refuse(rec, 'authority', 'not_ip_authority', 403, EGRESS_DENIED_BODY);
    rec.destination = destination.authority;
    const forbidden = this.deps.forbidden.refuses(destination.ip, destination.port);
    if (forbidden !== undefined) {
      rec.detail = forbidden;
      return this.#refuse(rec, 'forbidden_destination', 'denied', 403, EGRESS_DENIED_BODY);
    }
    rec.place = tunnels.reserve(rec.actor);
    if (rec.place === undefined) return this.#refuse(rec, 'too_many_tunnels', 'too_many_tunnels', 429, TOO_MANY_TUNNELS_BODY);

    const question: EgressQuestion = { destination: destination.authority, certificatePem: request.connection.certificatePem ?? '' };
    const key = { certDigest: check.digest, destination: destination.authority, actor: check.actor };
    const slowPath = async (): Promise<EgressAnswer> => {
      const answer = await this.deps.slowPath(question, request.gone.signal);
      if (answer.detail !== undefined) rec.detail = answer.detail;
      return answer;
    };
    let decided = await decider.decide(key, check.notAfterMs, slowPath);
    // A verdict shared with another CONNECT whose actor left (its stream cancelled) is not this one's: ask once more.
    if (isCancelled(decided.verdict) && !request.gone.left) decided = await decider.decide(key, check.notAfterMs, slowPath);
    rec.cache = decided.cache;
    if (request.gone.left) return this.#cancelled(rec);
    const verdict = decided.verdict;
    if (verdict.kind === 'deny') {
      request.refuse(verdict.status, verdict.body);
      return this.#finish(rec, outcomeOf(verdict.outcome), verdict.status);
    }
    const terms: GrantTerms = { key, certNotAfterMs: check.notAfterMs, question, lease: decided.lease ?? leaseFor(this.deps.now(), decider.ttlMs, check.notAfterMs) };
    if (verdict.kind === 'hostnames') return this.#decideOnTraffic(rec, destination, verdict.rules, terms);

    rec.hold = this.deps.grants.hold(terms.key, terms.certNotAfterMs, terms.question, terms.lease);
    const dialed = await dial(destination, limits.connectTimeoutMs, request.gone);
    if (dialed.kind === 'cancelled') return this.#cancelled(rec);
    if (dialed.kind === 'failed') {
      rec.detail = dialed.reason;
      return this.#refuse(rec, 'unreachable', 'unreachable', 502, UNREACHABLE_BODY);
    }
    const ended = rec.hold.ended;
    if (ended !== undefined) {
      dialed.socket.destroy();
      return this.#endedBeforeOpen(rec, ended);
    }
    const side = request.accept();
    if (side === undefined) {
      dialed.socket.destroy();
      return this.#cancelled(rec);
    }
    this.#openTunnel(rec, side, dialed.socket, side.head);
  }

  #openTunnel(rec: ConnectRecord, side: AcceptedConnect, socket: Socket, head: Buffer): void {
    rec.tunnel = new EgressTunnel(side, socket, head, this.deps.limits, this.#hooks);
    this.#tunnelOf.set(rec.tunnel, rec);
    this.deps.tunnels.opened(rec.tunnel);
    rec.hold?.attach(rec.tunnel);
    this.deps.stats.tallies.opened++;
    this.#count(rec, 'allowed');
  }

  /** Step 8: 200, the first bytes, then the tunnel or the actor's side closed. */
  async #decideOnTraffic(rec: ConnectRecord, destination: { readonly ip: string; readonly port: number }, rules: readonly HostnameCandidate[], terms: GrantTerms): Promise<void> {
    // It joins its key's grant now: a revoke, a denial or fresher rules reach it while its first bytes are read too.
    rec.hold = this.deps.grants.hold(terms.key, terms.certNotAfterMs, terms.question, terms.lease, rules);
    const side = rec.request.accept();
    if (side === undefined) return this.#cancelled(rec);
    const hostnames = this.deps.stats.tallies.hostnames;
    const read = await readHostname(side, rules, this.deps.hostnameLimits);
    if (read.kind === 'gone') return this.#closeAccepted(rec, side, 'cancelled');
    if (read.name !== undefined) rec.hostname = read.name.length > LOGGED_HOSTNAME_CHARS ? `${read.name.slice(0, LOGGED_HOSTNAME_CHARS)}…` : read.name;
    if (read.kind === 'refuse') {
      hostnames.refused[read.reason]++;
      rec.detail = read.detail === undefined ? read.reason : `${read.reason}: ${read.detail}`;
      return this.#closeAccepted(rec, side, 'hostname_refused');
    }
    // Allowed for this name: its grant checks it against the rules it heard meanwhile, and again at every fresher verdict.
    const hold = rec.hold;
    hold.allowFor(read.name);
    if (hold.ended !== undefined) return this.#endedAfterRead(rec, side, hold.ended);
    // The actor may close while its destination is dialled: the dial is given up.
    const gone = new Departure();
    const onClose = (): void => gone.leave();
    side.stream.once('close', onClose);
    const dialed = await dial(destination, this.deps.limits.connectTimeoutMs, gone);
    side.stream.off('close', onClose);
    if (dialed.kind === 'failed') {
      this.deps.stats.tallies.refusals.unreachable++;
      rec.detail = dialed.reason;
      return this.#closeAccepted(rec, side, 'unreachable');
    }
    if (dialed.kind === 'cancelled' || side.stream.destroyed) {
      if (dialed.kind === 'connected') dialed.socket.destroy();
      return this.#closeAccepted(rec, side, 'cancelled');
    }
    if (hold.ended !== undefined) {
      dialed.socket.destroy();
      return this.#endedAfterRead(rec, side, hold.ended);
    }
    hostnames.allowed[read.by]++;
    this.#openTunnel(rec, side, dialed.socket, read.head);
  }

  /** Decided on its traffic, its grant (or its part in it) ended before its tunnel opened: closed, as the end says. */
  #endedAfterRead(rec: ConnectRecord, side: AcceptedConnect, ended: GrantEnd): void {
    rec.detail = `grant ended before the tunnel opened: ${ended}`;
    this.#closeAccepted(rec, side, ended === 'internal' ? 'internal' : revokedAnswerOf(ended).outcome);
  }

  /** A CONNECT answered 200 that opens no tunnel: the actor's side is closed (RST_STREAM on HTTP/2). */
  #closeAccepted(rec: ConnectRecord, side: AcceptedConnect, outcome: EgressConnectOutcome): void {
    side.abort();
    this.#finish(rec, outcome, 200);
  }

  readonly #tunnelOf = new WeakMap<EgressTunnel, ConnectRecord>();

  #refuse(rec: ConnectRecord, reason: EgressRefusal, outcome: EgressConnectOutcome, status: number, body: string, headers?: Record<string, string>): void {
    this.deps.stats.tallies.refusals[reason]++;
    rec.request.refuse(status, body, headers);
    this.#finish(rec, outcome, status);
  }

  /** Counts the CONNECT's outcome once. */
  #count(rec: ConnectRecord, outcome: EgressConnectOutcome): boolean {
    if (rec.finished) return false;
    rec.finished = true;
    this.deps.stats.tallies.connects[outcome]++;
    return true;
  }

  /** Its grant ended while the destination was dialled: refused as the end says, never opened. */
  #endedBeforeOpen(rec: ConnectRecord, ended: GrantEnd): void {
    rec.detail = `grant ended before the tunnel opened: ${ended}`;
    if (ended === 'internal') {
      rec.request.refuse(500, 'internal error');
      return this.#finish(rec, 'internal', 500);
    }
    const answer = revokedAnswerOf(ended);
    rec.request.refuse(answer.status, answer.body);
    this.#finish(rec, answer.outcome, answer.status);
  }

  /** The actor went away before its answer: what is left of its connection or stream is closed. */
  #cancelled(rec: ConnectRecord): void {
    rec.request.destroy();
    this.#finish(rec, 'cancelled', 499);
  }

  /** A CONNECT that opened no tunnel: counted, its place given back, its line logged. */
  #finish(rec: ConnectRecord, outcome: EgressConnectOutcome, status: number): void {
    if (!this.#count(rec, outcome)) return;
    rec.place?.release();
    rec.hold?.release();
    this.#logLine(rec, outcome, status, null);
  }

  #tunnelClosed(tunnel: EgressTunnel, reason: EgressCloseReason, bytes: EgressBytes, durationMs: number): void {
    const t = this.deps.stats.tallies;
    t.closed[reason]++;
    t.bytes.fromActor += bytes.fromActor;
    t.bytes.toActor += bytes.toActor;
    this.deps.tunnels.closed(tunnel);
    const rec = this.#tunnelOf.get(tunnel);
    if (rec === undefined) return;
    rec.place?.release();
    rec.hold?.release();
    const grant = rec.hold === undefined ? null : { origin: rec.hold.lease.origin, generation: rec.hold.lease.generation };
    this.#logLine(rec, 'allowed', 200, { durationMs: Math.round(durationMs * 1000) / 1000, fromActor: bytes.fromActor, toActor: bytes.toActor, closedBy: reason, grant });
  }

  #logLine(rec: ConnectRecord, outcome: EgressConnectOutcome, status: number, tunnel: Readonly<Record<string, unknown>> | null): void {
    const log = this.deps.accessLog;
    if (log === undefined || !log.enabled) return;
    const authority = rec.request.authority;
    log.write({
      msg: 'egress',
      time: new Date().toISOString(),
      pid: process.pid,
      protocol: rec.request.protocol,
      client: rec.request.connection.remoteAddress,
      method: rec.request.method.length > 32 ? `${rec.request.method.slice(0, 32)}…` : rec.request.method,
      actor: rec.actor ?? null,
      destination: rec.destination ?? (authority.length > LOGGED_AUTHORITY_CHARS ? `${authority.slice(0, LOGGED_AUTHORITY_CHARS)}…` : authority),
      outcome,
      cache: rec.cache ?? null,
      status,
      durationMs: Math.round((performance.now() - rec.startedAt) * 1000) / 1000,
      tunnel,
      hostname: rec.hostname ?? null,
      detail: rec.detail ?? null,
    });
  }
}
