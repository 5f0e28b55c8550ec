/**
 * One ext_proc Process stream (one HTTP request). Messages are answered strictly in order, one response each:
 * request headers are resolved (asynchronously); response headers, bodies and trailers get a plain CONTINUE.
 * When the data plane half-closes, the server finishes what is pending and ends the RPC with OK. Envoy then
 * usually resets the stream (CANCELLED): that is its normal way to end a stream, not an error.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { ExtprocMetrics } from './metrics.js';
import type { ProcessCall, ProcessingResponse } from './protocol.js';
import type { RequestSummary } from './wire.js';
import type { Resolver } from './resolver.js';
import { CONTINUE } from './responses.js';

export interface StreamDeps {
  readonly resolver: Resolver;
  readonly metrics: ExtprocMetrics;
  readonly log: Logger;
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

  constructor(
    private readonly call: ProcessCall,
    private readonly deps: StreamDeps,
  ) {}

  onMessage(message: RequestSummary): void {
    if (this.state.kind === 'resolving') this.state.queue.push(message);
    else if (this.state.kind === 'idle') this.handle(message);
  }

  onHalfClose(): void {
    if (this.state.kind === 'resolving') this.state.halfClosed = true;
    else this.end();
  }

  onClosed(): void {
    const s = this.state;
    if (s.kind === 'closed') return;
    if (s.kind === 'resolving') s.abort.abort();
    this.state = { kind: 'closed', failed: s.kind === 'failed' };
    this.deps.metrics.streamClosed();
  }

  onError(err: grpc.ServiceError): void {
    const s = this.state;
    const ours = s.kind === 'failed' || (s.kind === 'closed' && s.failed);
    if (!ours && err.code !== grpc.status.CANCELLED) this.deps.log.warn({ code: err.code, details: err.details }, 'ext_proc stream error');
    this.onClosed();
  }

  private handle(message: RequestSummary): void {
    const kind = message.request;
    if (kind === 'request_headers') this.resolve(message.authority);
    else if (kind !== undefined) this.write(CONTINUE[kind]);
    else this.fail(grpc.status.INVALID_ARGUMENT, 'ProcessingRequest has no request set');
  }

  private resolve(authority: string): void {
    const resolving = { kind: 'resolving' as const, abort: new AbortController(), queue: [] as RequestSummary[], halfClosed: false };
    this.state = resolving;
    this.deps.resolver.requestHeaders(authority, resolving.abort.signal).then(
      (response) => {
        if (this.state !== resolving) return;
        this.state = IDLE;
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
    if (!this.call.cancelled) this.call.end();
  }

  private fail(code: grpc.status, details: string): void {
    if (this.state.kind !== 'idle') return;
    this.state = FAILED;
    this.deps.log.warn({ code: grpc.status[code], details }, 'ext_proc stream rejected');
    if (!this.call.cancelled) this.call.emit('error', { code, details, metadata: new grpc.Metadata() });
  }
}

export function serveStream(call: ProcessCall, deps: StreamDeps): void {
  deps.metrics.streamOpened();
  const stream = new ProcessStream(call, deps);
  call.on('data', (message: RequestSummary) => stream.onMessage(message));
  call.on('end', () => stream.onHalfClose());
  call.on('cancelled', () => stream.onClosed());
  call.on('close', () => stream.onClosed());
  call.on('finish', () => stream.onClosed());
  call.on('error', (err: grpc.ServiceError) => stream.onError(err));
}
