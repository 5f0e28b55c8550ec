/**
 * What the ext-proc filter needs from an ext_proc client: open one `Process` stream per HTTP request, send
 * messages on it and wait for each answer (a round trip), close it. `grpc-client.ts` is the real one (gRPC, Envoy's stream and close semantics); tests
 * can hand the filter a fake.
 */
import type { Span } from '@opentelemetry/api';
import type { ProcessingRequest, ProcessingResponse } from './messages.js';

/** What one message round trip ended with. */
export type MessageResult =
  | { readonly kind: 'response'; readonly response: ProcessingResponse }
  /** The processor ended the stream with OK: continue without it. */
  | { readonly kind: 'closed' }
  /**
   * The stream ended with an error. `connectionLost`: no status came from the processor, the connection under the
   * stream failed (`connection-loss.ts`): the channel's failure, retried as an outage, never the processor's answer.
   */
  | { readonly kind: 'error'; readonly code: string; readonly details: string; readonly connectionLost?: true }
  | { readonly kind: 'timeout' }
  /** The client request went away while waiting. */
  | { readonly kind: 'aborted' };

export interface ExtProcStream {
  /** Sends `message` and waits for the processor's answer (or the stream's end, the message timeout, or `signal`). */
  roundTrip(message: ProcessingRequest, signal?: AbortSignal): Promise<MessageResult>;
  /**
   * Waits for the next message the processor sends unasked (a streamed immediate response's body and trailers),
   * within the message timeout; messages that arrived before the call are returned first, in order.
   */
  receive(signal?: AbortSignal): Promise<MessageResult>;
  /** Ends the stream; a caller still waiting gets `aborted`. Idempotent. */
  close(): void;
}

/** How a stream is opened. */
export interface StreamOptions {
  /**
   * Milliseconds left of the request's re-run budget, sent as the stream's `actor-edge-resume-budget-ms` metadata
   * (the processor may retry within it); absent: not sent.
   */
  readonly budgetMs?: number;
  /** Tracing on: the stream's client span (its W3C trace context sent as the call's metadata). */
  readonly span?: Span | undefined;
}

export interface ExtProcClient {
  /**
   * Opens a new Process stream (one per HTTP request). `options.span` (tracing on): the stream's client span, whose
   * trace context goes to the processor in the call's metadata; the stream ends it when it closes.
   */
  open(options?: StreamOptions): ExtProcStream;
  /** Closes the channel (at shutdown). */
  close(): void;
}
