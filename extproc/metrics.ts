/**
 * extproc's counters, kept as plain numbers on the hot path and exposed two ways: Prometheus (/metrics, lifetime
 * values, read at scrape time, named `actor_edge_extproc_…`) and the /stats JSON (values since the last POST
 * /stats/reset). Labels come only from fixed sets (outcome, resume role, gRPC code names, health-check results),
 * never from client-supplied names.
 */
import { Registry, collectDefaultMetrics, type Histogram } from 'prom-client';
import { OUTCOME_LABELS, type OutcomeLabel } from '../lib/resume/http-errors.js';
import type { ParkingLot } from '../lib/resume/parking-lot.js';
import { processStats, resetProcessStats, type ProcessStats } from '../lib/process-stats.js';
import { histogram, metricPrefix, registerBuildInfo, samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge } from '../lib/prom-metrics.js';
import { SinceReset } from '../lib/since-reset.js';
import type { HandshakeCounts } from '../lib/tls/grpc-mtls-server.js';
import { EGRESS_OUTCOMES, type EgressOutcome } from '../lib/egress/wire.js';
import type { Sample } from '../lib/prom-metrics.js';

/** actor-ingress route-duration buckets, in seconds. */
export const ROUTE_DURATION_BUCKETS = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30,
]);

const P = metricPrefix('extproc');

/** Readiness as the metrics read it: ready now (no waiting), and the control-plane check's counts. */
export interface ReadinessGauge {
  ready(): boolean;
  checks(): { readonly ok: number; readonly failed: number };
}

export type ResumeRole = 'none' | 'triggered' | 'joined' | 'unknown';

interface Tallies {
  streams: number;
  idleTimeouts: number;
  requests: Record<OutcomeLabel, number>;
  resumeCalls: Record<string, number>;
  /** ResumeActor calls made again after a retryable error, by that error's code. */
  resumeRetries: Record<string, number>;
  /** Requests answered with the last retryable error because no retry could start within their data plane's budget. */
  outOfBudget: number;
  flightJoins: number;
  /** Egress CONNECTs answered, by outcome. */
  egress: Record<EgressOutcome, number>;
  /** The control-plane reads egress CONNECTs made, by RPC and gRPC code. */
  egressCalls: Record<string, Record<string, number>>;
}

export interface ExtprocStats {
  readonly streams: { readonly total: number; readonly active: number; readonly idleTimeouts: number };
  readonly requests: Readonly<Record<string, number>>;
  readonly resumeCalls: Readonly<Record<string, number>>;
  readonly resumeRetries: Readonly<Record<string, number>>;
  readonly outOfBudget: number;
  readonly flightJoins: number;
  readonly parked: { readonly active: number; readonly rejected: number };
  /** Egress CONNECTs by outcome, and the control-plane reads they made by RPC and code. */
  readonly egress: { readonly requests: Readonly<Record<string, number>>; readonly controlCalls: Readonly<Record<string, Readonly<Record<string, number>>>> };
  /** The ext_proc listener's connections by outcome (present with mTLS on the listener). */
  readonly tls?: HandshakeCounts;
  readonly process: ProcessStats;
}

function zeroRequests(): Record<OutcomeLabel, number> {
  return Object.fromEntries(OUTCOME_LABELS.map((l) => [l, 0])) as Record<OutcomeLabel, number>;
}

function zeroEgress(): Record<EgressOutcome, number> {
  return Object.fromEntries(Object.keys(EGRESS_OUTCOMES).map((o) => [o, 0])) as Record<EgressOutcome, number>;
}

/** Counts by RPC and code, without those that stayed at zero (since the last reset). */
function calledOnly(calls: Readonly<Record<string, Readonly<Record<string, number>>>>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [rpc, byCode] of Object.entries(calls)) {
    const called = Object.entries(byCode).filter(([, n]) => n > 0);
    if (called.length > 0) out[rpc] = Object.fromEntries(called);
  }
  return out;
}

function callSamples(calls: Readonly<Record<string, Readonly<Record<string, number>>>>): Sample<'rpc' | 'code'>[] {
  const out: Sample<'rpc' | 'code'>[] = [];
  for (const [rpc, byCode] of Object.entries(calls)) for (const [code, n] of Object.entries(byCode)) out.push([{ rpc, code }, n]);
  return out;
}

export class ExtprocMetrics {
  readonly registry = new Registry();
  private readonly life: Tallies = {
    streams: 0,
    idleTimeouts: 0,
    requests: zeroRequests(),
    resumeCalls: {},
    resumeRetries: {},
    outOfBudget: 0,
    flightJoins: 0,
    egress: zeroEgress(),
    egressCalls: {},
  };
  private readonly sinceReset: SinceReset<Tallies & { parkedRejected: number; tls: HandshakeCounts | Record<string, never> }>;
  private activeStreams = 0;
  private readonly routeDuration: Histogram<'outcome' | 'resume'>;
  private readonly egressDuration: Histogram<'outcome'>;

  #health: ReadinessGauge = { ready: () => false, checks: () => ({ ok: 0, failed: 0 }) };

  /** `tls`: the ext_proc listener's handshake tallies, when it runs mTLS. */
  constructor(
    private readonly lot: () => ParkingLot,
    private readonly tls?: () => HandshakeCounts,
  ) {
    const life = this.life;
    const r = this.registry;
    collectDefaultMetrics({ register: r });
    registerBuildInfo(r, 'extproc');
    scrapedGauge(r, { name: `${P}ready`, help: '1 while /ready answers 200 (serving, control plane answering), else 0.', read: () => (this.#health.ready() ? 1 : 0) });
    scrapedCounterBy(r, {
      name: `${P}control_plane_health_checks_total`,
      help: 'gRPC health checks of the control plane, by result (ok: answered and serving or without a health service; failed).',
      labelNames: ['result'],
      read: () => samplesBy('result', this.#health.checks()),
    });
    this.sinceReset = new SinceReset(() => ({ ...life, parkedRejected: lot().rejected, tls: tls?.() ?? {} }));
    if (tls !== undefined) {
      scrapedCounterBy(r, {
        name: `${P}tls_handshakes_total`,
        help: 'Connections to the ext_proc listener by outcome: accepted, refused_handshake (plaintext, no or untrusted certificate, not TLS 1.3), refused_identity, refused_alpn.',
        labelNames: ['outcome'],
        read: () => samplesBy('outcome', tls()),
      });
    }
    scrapedCounter(r, { name: `${P}streams_total`, help: 'ext_proc Process streams opened.', read: () => life.streams });
    scrapedGauge(r, { name: `${P}streams_active`, help: 'ext_proc Process streams open now.', read: () => this.activeStreams });
    scrapedCounter(r, {
      name: `${P}stream_idle_timeouts_total`,
      help: 'Process streams ended because the data plane neither sent nor half-closed in time.',
      read: () => life.idleTimeouts,
    });
    scrapedCounterBy(r, {
      name: `${P}requests_total`,
      help: 'Request-headers messages answered, by outcome.',
      labelNames: ['outcome'],
      read: () => samplesBy('outcome', life.requests),
    });
    scrapedCounterBy(r, {
      name: `${P}resume_calls_total`,
      help: 'ResumeActor calls made, by gRPC status code.',
      labelNames: ['code'],
      read: () => samplesBy('code', life.resumeCalls),
    });
    scrapedCounterBy(r, {
      name: `${P}resume_retries_total`,
      help: 'ResumeActor calls made again after a retryable error (ABORTED, UNAVAILABLE; with parking RESOURCE_EXHAUSTED, FAILED_PRECONDITION), by that code.',
      labelNames: ['code'],
      read: () => samplesBy('code', life.resumeRetries),
    });
    scrapedCounter(r, {
      name: `${P}resume_out_of_budget_total`,
      help: "Requests answered with the last retryable error because no retry could start within the data plane's budget (actor-edge-resume-budget-ms).",
      read: () => life.outOfBudget,
    });
    scrapedCounter(r, {
      name: `${P}flight_joins_total`,
      help: 'Requests that joined a ResumeActor already under way for their actor.',
      read: () => life.flightJoins,
    });
    scrapedGauge(r, { name: `${P}parking_active`, help: 'Requests parked now, waiting on a retrying resume.', read: () => lot().active });
    scrapedCounter(r, { name: `${P}parking_rejected_total`, help: 'Requests shed because the parking lot was full.', read: () => lot().rejected });
    this.routeDuration = histogram(r, {
      name: `${P}route_duration_seconds`,
      help: 'From request headers received until the worker endpoint was resolved (or the request was answered).',
      labelNames: ['outcome', 'resume'],
      buckets: ROUTE_DURATION_BUCKETS,
    });
    scrapedCounterBy(r, {
      name: `${P}egress_requests_total`,
      help: 'Egress CONNECTs answered (request headers with xds.listener_direction OUTBOUND), by outcome: allowed, denied, invalid_certificate, unknown_actor, not_running, not_ip_authority, unavailable, cancelled.',
      labelNames: ['outcome'],
      read: () => samplesBy('outcome', life.egress),
    });
    scrapedCounterBy(r, {
      name: `${P}egress_control_calls_total`,
      help: 'Control-plane reads made for egress CONNECTs (GetActor, GetActorEgressPolicy), by RPC and gRPC status code.',
      labelNames: ['rpc', 'code'],
      read: () => callSamples(life.egressCalls),
    });
    this.egressDuration = histogram(r, {
      name: `${P}egress_duration_seconds`,
      help: 'From an egress CONNECT\'s request headers received until it was answered, by outcome.',
      labelNames: ['outcome'],
      buckets: ROUTE_DURATION_BUCKETS,
    });
  }

  /** What the readiness gauge and the health-check counter read (the server's readiness and probe). */
  watchHealth(health: ReadinessGauge): void {
    this.#health = health;
  }

  streamOpened(): void {
    this.life.streams++;
    this.activeStreams++;
  }

  streamClosed(): void {
    this.activeStreams--;
  }

  streamIdleTimeout(): void {
    this.life.idleTimeouts++;
  }

  request(outcome: OutcomeLabel, resume: ResumeRole, seconds: number): void {
    this.life.requests[outcome]++;
    this.routeDuration.observe({ outcome, resume }, seconds);
  }

  resumeCall(code: string): void {
    this.life.resumeCalls[code] = (this.life.resumeCalls[code] ?? 0) + 1;
  }

  flightJoin(): void {
    this.life.flightJoins++;
  }

  resumeRetry(code: string): void {
    this.life.resumeRetries[code] = (this.life.resumeRetries[code] ?? 0) + 1;
  }

  outOfBudget(): void {
    this.life.outOfBudget++;
  }

  egressRequest(outcome: EgressOutcome, seconds: number): void {
    this.life.egress[outcome]++;
    this.egressDuration.observe({ outcome }, seconds);
  }

  egressControlCall(rpc: string, code: string): void {
    const byCode = (this.life.egressCalls[rpc] ??= {});
    byCode[code] = (byCode[code] ?? 0) + 1;
  }

  stats(): ExtprocStats {
    const d = this.sinceReset.current();
    return {
      streams: { total: d.streams, active: this.activeStreams, idleTimeouts: d.idleTimeouts },
      requests: d.requests,
      resumeCalls: d.resumeCalls,
      resumeRetries: d.resumeRetries,
      outOfBudget: d.outOfBudget,
      flightJoins: d.flightJoins,
      parked: { active: this.lot().active, rejected: d.parkedRejected },
      egress: { requests: d.egress, controlCalls: calledOnly(d.egressCalls) },
      ...(this.tls === undefined ? {} : { tls: d.tls as HandshakeCounts }),
      process: processStats(),
    };
  }

  /** Zeros the /stats counters (Prometheus keeps lifetime values) and the process CPU baseline. */
  reset(): void {
    this.sinceReset.reset();
    resetProcessStats();
  }
}
