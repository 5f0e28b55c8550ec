/**
 * extproc's counters, kept as plain numbers on the hot path and exposed two ways: Prometheus (/metrics, lifetime
 * values, read at scrape time) and the /stats JSON (values since the last POST /stats/reset). Labels come only
 * from fixed sets (outcome, resume role, gRPC code names), never from client-supplied names.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OUTCOME_LABELS, type OutcomeLabel } from '../lib/resume/http-errors.js';
import type { ParkingLot } from '../lib/resume/parking-lot.js';
import { processStats, resetProcessStats, type ProcessStats } from '../lib/process-stats.js';

/** actor-ingress route-duration buckets, in seconds. */
export const ROUTE_DURATION_BUCKETS = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30,
]);

export type ResumeRole = 'none' | 'triggered' | 'joined' | 'unknown';

interface Tallies {
  streams: number;
  idleTimeouts: number;
  requests: Record<OutcomeLabel, number>;
  resumeCalls: Record<string, number>;
  flightJoins: number;
  parkedRejected: number;
}

export interface ExtprocStats {
  readonly streams: { readonly total: number; readonly active: number; readonly idleTimeouts: number };
  readonly requests: Readonly<Record<string, number>>;
  readonly resumeCalls: Readonly<Record<string, number>>;
  readonly flightJoins: number;
  readonly parked: { readonly active: number; readonly rejected: number };
  readonly process: ProcessStats;
}

function zeroRequests(): Record<OutcomeLabel, number> {
  return Object.fromEntries(OUTCOME_LABELS.map((l) => [l, 0])) as Record<OutcomeLabel, number>;
}

export class ExtprocMetrics {
  readonly registry = new Registry();
  private readonly life: Tallies = { streams: 0, idleTimeouts: 0, requests: zeroRequests(), resumeCalls: {}, flightJoins: 0, parkedRejected: 0 };
  private base: Tallies;
  private activeStreams = 0;
  private readonly routeDuration: Histogram<'outcome' | 'resume'>;

  constructor(private readonly lot: () => ParkingLot | undefined) {
    this.base = this.snapshot();
    const life = this.life;
    const self = this;
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_streams_total', help: 'ext_proc Process streams opened.', registers: [],
        collect() { this.reset(); this.inc(life.streams); },
      }),
    );
    this.registry.registerMetric(
      new Gauge({
        name: 'extproc_streams_active', help: 'ext_proc Process streams open now.', registers: [],
        collect() { this.set(self.activeStreams); },
      }),
    );
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_stream_idle_timeouts_total', help: 'Process streams ended because the data plane neither sent nor half-closed in time.', registers: [],
        collect() { this.reset(); this.inc(life.idleTimeouts); },
      }),
    );
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_requests_total', help: 'Request-headers messages answered, by outcome.', labelNames: ['outcome'], registers: [],
        collect() {
          this.reset();
          for (const [outcome, n] of Object.entries(life.requests)) this.inc({ outcome }, n);
        },
      }),
    );
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_resume_calls_total', help: 'ResumeActor calls made, by gRPC status code.', labelNames: ['code'], registers: [],
        collect() {
          this.reset();
          for (const [code, n] of Object.entries(life.resumeCalls)) this.inc({ code }, n);
        },
      }),
    );
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_flight_joins_total', help: 'Requests that joined a ResumeActor already under way for their actor.', registers: [],
        collect() { this.reset(); this.inc(life.flightJoins); },
      }),
    );
    this.registry.registerMetric(
      new Gauge({
        name: 'extproc_parked_requests', help: 'Requests parked now, waiting on a retrying resume.', registers: [],
        collect() { this.set(self.lot()?.active ?? 0); },
      }),
    );
    this.registry.registerMetric(
      new Counter({
        name: 'extproc_parking_rejected_total', help: 'Requests shed because the parking lot was full.', registers: [],
        collect() { this.reset(); this.inc(self.lot()?.rejected ?? 0); },
      }),
    );
    this.routeDuration = new Histogram({
      name: 'extproc_route_duration_seconds',
      help: 'From request headers received until the worker endpoint was resolved (or the request was answered).',
      labelNames: ['outcome', 'resume'],
      buckets: [...ROUTE_DURATION_BUCKETS],
      registers: [this.registry],
    });
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

  stats(): ExtprocStats {
    const b = this.base;
    const life = this.life;
    const diff = (now: Record<string, number>, then: Record<string, number>): Record<string, number> =>
      Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (then[k] ?? 0)]));
    const lot = this.lot();
    return {
      streams: { total: life.streams - b.streams, active: this.activeStreams, idleTimeouts: life.idleTimeouts - b.idleTimeouts },
      requests: diff(life.requests, b.requests),
      resumeCalls: diff(life.resumeCalls, b.resumeCalls),
      flightJoins: life.flightJoins - b.flightJoins,
      parked: { active: lot?.active ?? 0, rejected: (lot?.rejected ?? 0) - b.parkedRejected },
      process: processStats(),
    };
  }

  /** Zeros the /stats counters (Prometheus keeps lifetime values) and the process CPU baseline. */
  reset(): void {
    this.base = this.snapshot();
    resetProcessStats();
  }

  private snapshot(): Tallies {
    return {
      streams: this.life.streams,
      idleTimeouts: this.life.idleTimeouts,
      requests: { ...this.life.requests },
      resumeCalls: { ...this.life.resumeCalls },
      flightJoins: this.life.flightJoins,
      parkedRejected: this.lot()?.rejected ?? 0,
    };
  }
}
