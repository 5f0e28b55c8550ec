/**
 * Answers one `request_headers` message: parse the actor from the authority, resolve it through the per-actor
 * flight, and turn the outcome into a route (header mutation + original_dst metadata) or a local reply.
 */
import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { ATTR_ACTOR, ATTR_ATESPACE, ATTR_RESOLVE_OUTCOME, ATTR_RESUME_ROLE } from '../lib/tracing/attributes.js';
import { spanContext } from './spans.js';
import { parseActorHost } from '../lib/actor-ref.js';
import type { ResumeFlights } from '../lib/resume/flight.js';
import { httpErrorFor, invalidHostError, type HttpError } from '../lib/resume/http-errors.js';
import type { ExtprocMetrics, ResumeRole } from './metrics.js';
import type { ProcessingResponse } from './protocol.js';
import { immediateResponse, RouteResponses } from './responses.js';

export interface ResolverDeps {
  readonly flights: ResumeFlights;
  readonly metrics: ExtprocMetrics;
  readonly log: Logger;
  readonly actorSuffix: string;
  readonly workerPort: number;
}

export class Resolver {
  private readonly routes: RouteResponses;

  constructor(private readonly deps: ResolverDeps) {
    this.routes = new RouteResponses(deps.workerPort);
  }

  /**
   * `authority` is the request's `:authority` (else `host`) value, '' when it has neither. `budgetMs`: what is
   * left of the data plane's own budget for the request (its stream metadata), which bounds the resume's retries.
   * `span` (tracing on): the stream's span, which gets the actor and how the resolution ended, and parents a flight
   * this request starts.
   */
  async requestHeaders(authority: string, signal: AbortSignal, budgetMs?: number, span?: Span): Promise<ProcessingResponse> {
    const started = performance.now();
    const parsed = parseActorHost(authority, this.deps.actorSuffix);
    if (parsed.kind === 'invalid') {
      this.deps.log.debug({ reason: parsed.reason }, 'invalid host');
      return this.reply(invalidHostError(authority), started, span);
    }
    const { ref, key, port } = parsed.actor;
    let outcome;
    if (span === undefined) outcome = await this.deps.flights.resolve(ref, key, signal, budgetMs);
    else {
      span.setAttributes({ [ATTR_ACTOR]: ref.name, [ATTR_ATESPACE]: ref.atespace, [ATTR_RESUME_ROLE]: this.deps.flights.isFlying(key) ? 'joined' : 'leader' });
      outcome = await this.deps.flights.resolve(ref, key, signal, budgetMs, spanContext(span));
    }
    if (outcome.kind === 'ok') {
      this.record('ok', outcome.resume, started);
      if (span !== undefined) span.setAttributes({ [ATTR_RESOLVE_OUTCOME]: 'ok', 'actor_edge.worker': outcome.ip });
      return this.routes.get(outcome.ip, port);
    }
    const error = httpErrorFor(outcome, key);
    if (error.outcome === 'resume_error' || error.outcome === 'routing_failed') {
      this.deps.log.warn({ actor: key, outcome }, 'resume failed');
    } else {
      this.deps.log.debug({ actor: key, outcome: error.outcome }, 'resume failed');
    }
    return this.reply(error, started, span);
  }

  private reply(error: HttpError, started: number, span: Span | undefined): ProcessingResponse {
    this.record(error.outcome, 'unknown', started);
    if (span !== undefined) span.setAttributes({ [ATTR_RESOLVE_OUTCOME]: error.outcome, 'http.response.status_code': error.status });
    return immediateResponse(error.status, error.body, `actor_edge_${error.outcome}`);
  }

  private record(outcome: Parameters<ExtprocMetrics['request']>[0], resume: ResumeRole, started: number): void {
    this.deps.metrics.request(outcome, resume, (performance.now() - started) / 1000);
  }
}
