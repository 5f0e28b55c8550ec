/**
 * The ext_proc gRPC client, as Envoy's ext_proc filter uses it: one `ExternalProcessor.Process` stream per HTTP
 * request, multiplexed on one HTTP/2 channel; each message waits for its answer within the message timeout.
 *
 * Closing follows Envoy's graceful close: as soon as nothing more will be sent the client half-closes and lets the
 * processor finish the call (an OK status, no error objects on either side); a processor that has not finished
 * within `REMOTE_CLOSE_TIMEOUT_MS` gets the stream cancelled (half-close then reset, Envoy's legacy close).
 *
 * An answer carrying `override_message_timeout` is not the answer: as Envoy, it restarts the wait's timer with the
 * asked duration — once per message, and only when it is within [1 ms, `maxMessageTimeoutMs`] — and otherwise is
 * ignored; either way the client keeps waiting for the real answer.
 *
 * With `tls` the channel runs mTLS with workload identities (`channel-tls.ts`); when its files change, new streams
 * go to a new channel made with the new credentials and the old channel is closed gracefully, so the streams open on
 * it finish there. Without it the channel is plaintext, which is logged as a warning.
 *
 * Every round trip (message written → how the wait ended) is reported to `counters.extprocRoundTrips`
 * (the `actor_edge_proxy_extproc_round_trip_seconds` histogram).
 *
 * Tracing on: a stream opened with its span sends that span's W3C trace context in the call's metadata
 * (`traceparent`, `tracestate`), so the processor's spans join the request's trace; each round trip is an event on
 * the span, which ends when the stream does (with the gRPC status the processor ended it with, if it did).
 */
import * as grpc from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import type { Span } from '@opentelemetry/api';
import { injectSpan } from '../../../lib/tracing/propagation.js';
import { endSpan } from '../../request/trace.js';
import { loadProto, lookup } from '../../../lib/proto.js';
import type { Counters } from '../../ops/stats.js';
import { messageKindOf } from '../../ops/extproc-round-trips.js';
import { durationMs, EXT_PROC_PROTO, EXT_PROC_SERVICE, type ProcessingRequest, type ProcessingResponse } from './messages.js';
import type { MessageResult, ExtProcClient, ExtProcStream, StreamOptions } from './client.js';
import { RESUME_BUDGET_METADATA } from '../../../lib/wire-contract.js';
import { ExtProcChannelTls } from './channel-tls.js';
import { isConnectionLoss } from './connection-loss.js';
import type { ExtProcTlsConfig } from './config.js';
import type { ProxyContainment } from '../../ops/containment.js';
import type { Logger } from '../../../lib/logger.js';
import { createHealthClient, type HealthClient } from '../../../lib/grpc-health.js';

export interface ExtProcClientOptions {
  /** `host:port` of the processor. */
  readonly address: string;
  readonly messageTimeoutMs: number;
  /** Envoy's `max_message_timeout`: the longest `override_message_timeout` honoured (0 or absent: none is). */
  readonly maxMessageTimeoutMs?: number;
  readonly counters: Counters;
  /** mTLS to the processor; absent: plaintext (logged as a warning). */
  readonly tls?: ExtProcTlsConfig | undefined;
  readonly log: Logger;
  /** The containment boundary: a message whose handling throws ends its stream alone (`extproc-message`). */
  readonly guard?: ProxyContainment | undefined;
}

type ProcessCall = grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
type ServiceClient = grpc.Client & { Process(metadata?: grpc.Metadata): ProcessCall };

/** The ext_proc channel's options (the readiness check uses the same ones, so it checks the same connection). */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({
  // Come back quickly when the processor restarts (the default backoff grows to two minutes): misses wait for it
  // (`retry-rule.ts`), so the channel should be connected again within a quarter second of its return.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 250,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
});

/** Unasked messages kept before the stream is paused (HTTP/2 flow control then holds the processor back). */
const UNASKED_PAUSE_AT = 16;

/** How long a half-closed stream may wait for the processor to finish before it is cancelled (Envoy: 1 s). */
export const REMOTE_CLOSE_TIMEOUT_MS = 1000;

export class GrpcExtProcClient implements ExtProcClient {
  #client: ServiceClient;
  readonly #opts: ExtProcClientOptions;
  readonly #tls: ExtProcChannelTls | undefined;
  /** Half-closed streams waiting for the processor's status, with when they were half-closed. */
  readonly #closing = new Map<GrpcExtProcStream, number>();
  readonly #sweeper: NodeJS.Timeout;
  #channels = 1;
  /** The health client on the current channel (made when first asked for). */
  #health: HealthClient | undefined;

  /** With `tls`, throws a UsageError naming the flag and the file when one is missing or unusable. */
  constructor(opts: ExtProcClientOptions) {
    this.#opts = opts;
    const log = opts.log;
    this.#tls = opts.tls === undefined ? undefined : new ExtProcChannelTls(opts.tls, log, () => this.#newChannel());
    if (this.#tls === undefined) {
      log.warn(
        { extproc: opts.address },
        'ext_proc hop is plaintext: the request headers of every miss travel unencrypted, and ext_proc is not authenticated (--extproc-credential-bundle and --extproc-trust-bundle turn on mTLS)',
      );
    }
    this.#client = this.#connect();
    this.#sweeper = setInterval(() => this.#sweep(REMOTE_CLOSE_TIMEOUT_MS), REMOTE_CLOSE_TIMEOUT_MS / 2);
    this.#sweeper.unref();
  }

  #connect(): ServiceClient {
    const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto(EXT_PROC_PROTO), EXT_PROC_SERVICE);
    const credentials = this.#tls?.credentials() ?? grpc.credentials.createInsecure();
    return new Ctor(this.#opts.address, credentials, CHANNEL_OPTIONS) as unknown as ServiceClient;
  }

  /** New streams go to a new channel (new credentials); the old one closes once its streams are done. */
  #newChannel(): void {
    const old = this.#client;
    this.#client = this.#connect();
    this.#health = undefined;
    this.#channels++;
    old.close();
  }

  /**
   * A gRPC health client on the channel new streams use now: the same connection, the same mTLS (the readiness
   * check). Never closed by itself: the channel closes with this client (or with a rotation).
   */
  healthClient(): HealthClient {
    return (this.#health ??= createHealthClient(this.#opts.address, { channel: this.#client.getChannel() }));
  }

  /** Channels made so far (1, plus one per credential reload). */
  get channels(): number {
    return this.#channels;
  }

  /**
   * Opens a new Process stream (one per HTTP request), with the request's remaining budget as metadata when given
   * and, tracing on, its span's trace context.
   */
  open(options: StreamOptions = {}): GrpcExtProcStream {
    const span = options.span;
    // grpc-js records the caller's stack for every call (to decorate errors); skipping the frames keeps a
    // stream's set-up cheap, and errors are reported by status code and details anyway.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    let call: ProcessCall;
    try {
      if (options.budgetMs === undefined && span === undefined) call = this.#client.Process();
      else {
        const metadata = new grpc.Metadata();
        if (options.budgetMs !== undefined) metadata.set(RESUME_BUDGET_METADATA, String(Math.max(0, Math.floor(options.budgetMs))));
        if (span !== undefined) injectSpan(span, (name, value) => metadata.set(name, value));
        call = this.#client.Process(metadata);
      }
    } finally {
      Error.stackTraceLimit = limit;
    }
    return new GrpcExtProcStream(call, this.#opts, this.#closing, span);
  }

  /** Half-closed streams the processor has not finished yet. */
  get closing(): number {
    return this.#closing.size;
  }

  #sweep(olderThanMs: number): void {
    const now = performance.now();
    for (const [stream, since] of this.#closing) {
      if (now - since >= olderThanMs) stream.cancel();
    }
  }

  close(): void {
    clearInterval(this.#sweeper);
    this.#sweep(0);
    this.#client.close();
    this.#tls?.close();
  }
}

interface Pending {
  readonly resolve: (r: MessageResult) => void;
  timer: NodeJS.Timeout;
  /** The timer was already extended by an `override_message_timeout` (Envoy honours one per message). */
  overridden: boolean;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

export class GrpcExtProcStream implements ExtProcStream {
  readonly #call: ProcessCall;
  readonly #opts: ExtProcClientOptions;
  #pending: Pending | undefined;
  /** Set once the stream ended from the server side (or by error). */
  #ended: MessageResult | undefined;
  #closed = false;
  /** A message was sent and its answer has not arrived (a timeout or an abandoned wait leaves it so). */
  #unanswered = false;
  /** Messages that arrived while nothing waited, for `receive` (a streamed immediate response's pieces). */
  readonly #unasked: ProcessingResponse[] = [];
  #paused = false;

  readonly #closing: Map<GrpcExtProcStream, number>;
  /** Tracing on: the stream's span (ended with the stream). */
  #span: Span | undefined;

  constructor(call: ProcessCall, opts: ExtProcClientOptions, closing: Map<GrpcExtProcStream, number>, span?: Span) {
    this.#call = call;
    this.#opts = opts;
    this.#closing = closing;
    this.#span = span;
    opts.counters.tallies.extproc.streams++;
    opts.counters.extprocStreamsActive++;
    call.on('data', (m: ProcessingResponse) => {
      try {
        this.#onMessage(m);
      } catch (err) {
        this.#internalError(err);
      }
    });
    call.on('status', (s: grpc.StatusObject) => this.#onEnd(s.code, s.details));
    call.on('error', (e: grpc.ServiceError) => this.#onEnd(e.code ?? grpc.status.UNKNOWN, e.details ?? e.message));
  }

  /** Handling a message threw: the stream ends as an INTERNAL error (its request fails as on any stream error). */
  #internalError(err: unknown): void {
    const guard = this.#opts.guard;
    if (guard !== undefined) guard.caught('extproc-message', undefined, err);
    else this.#opts.log.error({ err }, 'ext_proc: handling a message failed');
    this.#onEnd(grpc.status.INTERNAL, `the proxy could not handle the processor's message: ${err instanceof Error ? err.message : String(err)}`);
    this.#closed = true;
    this.#call.cancel();
  }

  #onMessage(m: ProcessingResponse): void {
    const call = this.#call;
    {
      if (m.override_message_timeout != null) return this.#overrideTimeout(durationMs(m.override_message_timeout));
      this.#unanswered = false;
      if (this.#pending !== undefined) return this.#finish({ kind: 'response', response: m });
      this.#unasked.push(m);
      if (this.#unasked.length >= UNASKED_PAUSE_AT && !this.#paused) {
        this.#paused = true;
        call.pause();
      }
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends `message` and waits for the processor's answer (or the stream's end, the timeout, or `signal`). */
  roundTrip(message: ProcessingRequest, signal?: AbortSignal): Promise<MessageResult> {
    if (this.#ended !== undefined) return Promise.resolve(this.#ended);
    if (this.#closed) return Promise.resolve({ kind: 'aborted' });
    if (signal?.aborted) return Promise.resolve({ kind: 'aborted' });
    this.#unasked.length = 0; // late answers to earlier messages are not this message's answer
    const kind = messageKindOf(message as unknown as Readonly<Record<string, unknown>>);
    const startedAt = performance.now();
    const observe = (r: MessageResult): void => {
      const seconds = (performance.now() - startedAt) / 1000;
      this.#opts.counters.extprocRoundTrips.observe(kind, r.kind, seconds);
      if (this.#span !== undefined) this.#span.addEvent(kind, { 'actor_edge.extproc.result': r.kind, 'actor_edge.extproc.round_trip_ms': Math.round(seconds * 1e6) / 1000 });
    };
    return this.#wait(
      signal,
      () => {
        this.#unanswered = true;
        this.#call.write(message);
      },
      observe,
    );
  }

  receive(signal?: AbortSignal): Promise<MessageResult> {
    const queued = this.#unasked.shift();
    if (queued !== undefined) {
      if (this.#paused && this.#unasked.length < UNASKED_PAUSE_AT / 2) {
        this.#paused = false;
        this.#call.resume();
      }
      return Promise.resolve({ kind: 'response', response: queued });
    }
    if (this.#ended !== undefined) return Promise.resolve(this.#ended);
    if (this.#closed || signal?.aborted) return Promise.resolve({ kind: 'aborted' });
    return this.#wait(signal, () => undefined);
  }

  /**
   * Waits (within the message timeout) for the next message, after `start` (which sends one, or nothing);
   * `settled` sees how the wait ended.
   */
  #wait(signal: AbortSignal | undefined, start: () => void, settled?: (r: MessageResult) => void): Promise<MessageResult> {
    return new Promise<MessageResult>((settle) => {
      const resolve = settled === undefined ? settle : (r: MessageResult): void => {
        settled(r);
        settle(r);
      };
      const timer = this.#timer(this.#opts.messageTimeoutMs);
      const onAbort = signal === undefined ? undefined : () => this.#finish({ kind: 'aborted' });
      if (onAbort !== undefined) signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending = { resolve, timer, overridden: false, signal, onAbort };
      start();
    });
  }

  #timer(ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      this.#opts.counters.tallies.extproc.timeouts++;
      this.#finish({ kind: 'timeout' });
    }, ms);
  }

  /** `override_message_timeout`: restart the pending wait's timer with `ms`, if allowed; the wait goes on either way. */
  #overrideTimeout(ms: number): void {
    const p = this.#pending;
    const max = this.#opts.maxMessageTimeoutMs ?? 0;
    if (p === undefined || p.overridden || max < 1 || !(ms >= 1 && ms <= max)) return;
    p.overridden = true;
    clearTimeout(p.timer);
    p.timer = this.#timer(ms);
  }

  #finish(result: MessageResult): void {
    const p = this.#pending;
    if (p === undefined) return; // nothing waiting: a late or unsolicited message
    this.#pending = undefined;
    clearTimeout(p.timer);
    if (p.onAbort !== undefined) p.signal?.removeEventListener('abort', p.onAbort);
    p.resolve(result);
  }

  #onEnd(code: number, details: string): void {
    this.#closing.delete(this);
    if (this.#ended !== undefined) return;
    this.#endSpan(code);
    if (code === grpc.status.OK) {
      this.#ended = { kind: 'closed' };
    } else {
      if (this.#closed && code === grpc.status.CANCELLED) {
        this.#ended = { kind: 'aborted' }; // our own cancel
      } else {
        this.#opts.counters.tallies.extproc.errors++;
        const name = grpc.status[code] ?? String(code);
        this.#ended = isConnectionLoss(name, details) ? { kind: 'error', code: name, details, connectionLost: true } : { kind: 'error', code: name, details };
      }
    }
    this.#finish(this.#ended);
  }

  /**
   * Ends the stream: half-close and let the processor finish (cancelled after REMOTE_CLOSE_TIMEOUT_MS if it does
   * not). A caller still waiting gets `aborted`. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#opts.counters.extprocStreamsActive--;
    this.#finish({ kind: 'aborted' });
    this.#endSpan(undefined);
    if (this.#ended !== undefined) return;
    this.#call.end();
    // A stream closed with a message unanswered (a timeout, the client gone) is reset at once, as Envoy does.
    if (this.#unanswered) this.#call.cancel();
    else this.#closing.set(this, performance.now());
  }

  /** Ends the stream's span once: when the proxy is done with the stream, or the processor ended it first. */
  #endSpan(code: number | undefined): void {
    const span = this.#span;
    if (span === undefined) return;
    this.#span = undefined;
    const failed = code !== undefined && code !== grpc.status.OK && !(this.#closed && code === grpc.status.CANCELLED);
    endSpan(span, failed ? (grpc.status[code] ?? String(code)) : undefined, code === undefined ? undefined : { 'rpc.response.status_code': grpc.status[code] ?? String(code) });
  }

  /** Resets the stream now (half-close first if that has not happened). */
  cancel(): void {
    this.#closing.delete(this);
    if (!this.#closed) this.close();
    if (this.#ended === undefined) this.#call.cancel();
  }
}
