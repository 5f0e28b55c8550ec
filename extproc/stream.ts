/**
 * One ext_proc Process stream (one HTTP request). Messages are answered strictly in order, one response each:
 * request headers are resolved (asynchronously: an actor's request by the resolver, an egress CONNECT — its
 * `xds.listener_direction` attribute OUTBOUND — by the egress resolver); response headers, bodies and trailers get a
 * plain CONTINUE.
 * When the data plane half-closes, the server finishes what is pending and ends the RPC with OK. Envoy then
 * usually resets the stream (CANCELLED): that is its normal way to end a stream, not an error.
 *
 * Idle timeout (`--stream-idle-timeout-ms`): a stream on which the data plane neither sends a message nor
 * half-closes for that long, while no answer is pending, ends with DEADLINE_EXCEEDED and is counted; otherwise a
 * data plane that never half-closes would hold the stream until its connection closes.
 */
import * as grpc from '@grpc/grpc-js';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { endStreamSpan, startStreamSpan } from './spans.js';
import type { ExtprocMetrics } from './metrics.js';
import type { ProcessCall, ProcessingResponse } from './protocol.js';
import type { RequestSummary } from './wire.js';
import type { Resolver } from './resolver.js';
import type { EgressResolver } from './egress/egress-resolver.js';
import { OUTBOUND_DIRECTION } from '../lib/egress/wire.js';
import { CONTINUE } from './responses.js';
import { callerBudgetMs } from './caller-budget.js';

export interface StreamDeps {
  readonly resolver: Resolver;
  /** Answers request headers whose `xds.listener_direction` attribute is OUTBOUND (an egress CONNECT). */
  readonly egress: EgressResolver;
  readonly metrics: ExtprocMetrics;
  readonly log: Logger;
  /** 0: no idle timeout. */
  readonly idleTimeoutMs: number;
  /** Tracing on: each stream gets a server span (`spans.ts`); undefined: tracing off. */
  readonly tracer?: Tracer | undefined;
}

/**
 * - `idle`: answering messages as they come;
 * - `resolving`: request headers are being resolved; messages (and the peer's half-close) wait their turn;
 * - `ended` / `failed`: the server ended the RPC with OK / with an error status; later messages are ignored;
 * - `closed`: the call is gone (finished, cancelled or errored); a pending resolution is aborted.
 */
type StreamState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'resolving'; readonly abort: AbortController; readonly queue: RequestSummary[]; halfClosed: boolean }
  | { readonly kind: 'ended' }
  | { readonly kind: 'failed' }
  | { readonly kind: 'closed'; readonly failed: boolean };

const IDLE: StreamState = Object.freeze({ kind: 'idle' });
const ENDED: StreamState = Object.freeze({ kind: 'ended' });
const FAILED: StreamState = Object.freeze({ kind: 'failed' });

class ProcessStream {
  private state: StreamState = IDLE;
  /** The idle timer: armed while the data plane may still send or half-close (undefined without a timeout). */
  private idleTimer: NodeJS.Timeout | undefined;
  /** The gRPC status this side ended the stream with (undefined: the data plane went first). */
  private endCode: grpc.status | undefined;
  /** The data plane's budget for this request (its metadata) as an epoch-ms deadline; undefined: none sent. */
  private readonly budgetDeadline: number | undefined;

  constructor(
    private readonly call: ProcessCall,
    private readonly deps: StreamDeps,
    /** Tracing on: the stream's server span. */
    private readonly span: Span | undefined,
  ) {
    const budgetMs = callerBudgetMs(call.metadata);
    this.budgetDeadline = budgetMs === undefined ? undefined : Date.now() + budgetMs;
    if (deps.idleTimeoutMs > 0) {
      this.idleTimer = setTimeout(() => this.onIdle(), deps.idleTimeoutMs);
      this.idleTimer.unref();
    }
  }

  onMessage(message: RequestSummary): void {
    if (this.state.kind === 'resolving') {
      this.restartIdle();
      this.state.queue.push(message);
    } else if (this.state.kind === 'idle') {
      this.restartIdle();
      this.handle(message);
    }
  }

  onHalfClose(): void {
    this.stopIdle();
    if (this.state.kind === 'resolving') this.state.halfClosed = true;
    else this.end();
  }

  onClosed(): void {
    const s = this.state;
    if (s.kind === 'closed') return;
    this.stopIdle();
    if (s.kind === 'resolving') s.abort.abort();
    this.state = { kind: 'closed', failed: s.kind === 'failed' };
    this.deps.metrics.streamClosed();
    if (this.span !== undefined) endStreamSpan(this.span, this.endCode);
  }

  onError(err: grpc.ServiceError): void {
    const s = this.state;
    const ours = s.kind === 'failed' || (s.kind === 'closed' && s.failed);
    if (!ours && err.code !== grpc.status.CANCELLED) this.deps.log.warn({ code: err.code, details: err.details }, 'ext_proc stream error');
    this.onClosed();
  }

  private onIdle(): void {
    // Still resolving: the server, not the data plane, is the one being waited for.
    if (this.state.kind === 'resolving') return this.restartIdle();
    if (this.state.kind !== 'idle') return;
    this.deps.metrics.streamIdleTimeout();
    this.fail(grpc.status.DEADLINE_EXCEEDED, `stream idle for ${this.deps.idleTimeoutMs} ms`);
  }

  /** The data plane was heard from, or the last pending answer was written: the idle period starts again. */
  private restartIdle(): void {
    this.idleTimer?.refresh();
  }

  private stopIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private handle(message: RequestSummary): void {
    const kind = message.request;
    if (kind === 'request_headers') this.resolve(message);
    else if (kind !== undefined) this.write(CONTINUE[kind]);
    else this.fail(grpc.status.INVALID_ARGUMENT, 'ProcessingRequest has no request set');
  }

  /** Request headers: an egress CONNECT when the message says OUTBOUND, else an actor's request (the ingress path). */
  private resolve(message: RequestSummary): void {
    const resolving = { kind: 'resolving' as const, abort: new AbortController(), queue: [] as RequestSummary[], halfClosed: false };
    this.state = resolving;
    const budgetMs = this.budgetDeadline === undefined ? undefined : Math.max(0, this.budgetDeadline - Date.now());
    const attributes = message.attributes;
    const answer =
      attributes !== undefined && attributes.direction === OUTBOUND_DIRECTION
        ? this.deps.egress.connect(message.authority, attributes, resolving.abort.signal, budgetMs, this.span)
        : this.deps.resolver.requestHeaders(message.authority, resolving.abort.signal, budgetMs, this.span);
    answer.then(
      (response) => {
        if (this.state !== resolving) return;
        this.state = IDLE;
        this.restartIdle();
        this.write(response);
        this.drain(resolving.queue, resolving.halfClosed);
      },
      (err: unknown) => {
        this.deps.log.error({ err }, 'request headers failed');
        if (this.state !== resolving) return;
        this.state = IDLE;
        this.fail(grpc.status.INTERNAL, 'internal error');
      },
    );
  }

  /** Answers the messages that waited, in order, until one needs resolving again (which inherits the rest). */
  private drain(queue: RequestSummary[], halfClosed: boolean): void {
    while (this.state.kind === 'idle' && queue.length > 0) this.handle(queue.shift() as RequestSummary);
    const s = this.state;
    if (s.kind === 'resolving') {
      s.queue.push(...queue);
      s.halfClosed ||= halfClosed;
    } else if (halfClosed) {
      this.end();
    }
  }

  private write(response: ProcessingResponse): void {
    if (!this.call.cancelled) this.call.write(response);
  }

  private end(): void {
    if (this.state.kind !== 'idle') return;
    this.state = ENDED;
    this.endCode = grpc.status.OK;
    this.stopIdle();
    if (!this.call.cancelled) this.call.end();
  }

  private fail(code: grpc.status, details: string): void {
    if (this.state.kind !== 'idle') return;
    this.state = FAILED;
    this.endCode = code;
    this.stopIdle();
    this.deps.log.warn({ code: grpc.status[code], details }, 'ext_proc stream rejected');
    if (!this.call.cancelled) this.call.emit('error', { code, details, metadata: new grpc.Metadata() });
  }
}

export function serveStream(call: ProcessCall, deps: StreamDeps): void {
  deps.metrics.streamOpened();
  const stream = new ProcessStream(call, deps, deps.tracer === undefined ? undefined : startStreamSpan(deps.tracer, call.metadata));
  call.on('data', (message: RequestSummary) => stream.onMessage(message));
  call.on('end', () => stream.onHalfClose());
  call.on('cancelled', () => stream.onClosed());
  call.on('close', () => stream.onClosed());
  call.on('finish', () => stream.onClosed());
  call.on('error', (err: grpc.ServiceError) => stream.onError(err));
}
