/**
 * One upstream attempt: undici's dispatch handler for one request sent to one worker (undici's native handler
 * interface: no wrapping, raw header buffers), and the state it keeps until the attempt is over. It reports the
 * attempt's outcome once (`settle`): an answer as soon as its headers arrived, its body held paused until the chain
 * pipes it into the response writer (`UpstreamBody`), or the failure before any (`outcome.ts` classifies). A stale
 * rejection is read and discarded, never handed on. On a 101 it hands over the worker's socket with its pool slot.
 * Undici and Envoy keep the attempt apart from the router the same way; `router.ts` picks the pool and starts it.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Span } from '@opentelemetry/api';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxyRequest } from '../request/context.js';
import type { Counters } from '../ops/stats.js';
import { relayHeaders } from '../http/relayed-headers.js';
import { declaredTrailer, trailerList, type UpstreamTrailers } from '../http/trailers.js';
import type { WorkerPool } from './pools.js';
import type { UnsentAttempt, UnsentList } from './unsent-list.js';
import { CANCELLED, EJECTED, STALE, classifyFailure, isStaleRejection, type UpstreamFailure } from './outcome.js';
import type { OutlierDetector } from './outliers.js';
import { UpstreamResponse, type UpstreamAttemptResult, type BodySink, type UpstreamBody } from './response.js';
import { endUpstreamSpan } from './upstream-span.js';

/** Receives an attempt's outcome. */
export type AttemptCallback = (ctx: ProxyRequest, outcome: UpstreamAttemptResult) => void;

const enum State {
  Waiting,
  /** Response headers arrived and were handed on; the body waits (paused) to be piped. */
  Headed,
  Piped,
  Discarding,
  Done,
}

/** What arrived while the body waited to be piped. */
interface Held {
  readonly chunks: Buffer[];
  /** The body completed (with these trailers) before it was piped. */
  complete: { readonly trailers: UpstreamTrailers } | undefined;
}

/** One attempt's undici handler (undici's native handler interface: no wrapping, raw header buffers) and its body. */
export class UpstreamAttempt implements Dispatcher.DispatchHandler, UpstreamBody, UnsentAttempt {
  #state = State.Waiting;
  /** undici has a connected socket for this attempt and began writing the request. */
  #started = false;
  /** undici wrote the whole request, body included (`onRequestSent`). */
  #written = false;
  #abort: ((err?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #sink: BodySink | undefined;
  #held: Held | undefined;
  /** undici was told to pause (a chunk, or the head, arrived before the body was piped). */
  #paused = false;
  #failure: UpstreamFailure | undefined;
  // UnsentAttempt: the links of the pool's unsent list (`unsent-list.ts`).
  unsentList: UnsentList | undefined = undefined;
  unsentPrev: UnsentAttempt | undefined = undefined;
  unsentNext: UnsentAttempt | undefined = undefined;

  constructor(
    private readonly ctx: ProxyRequest,
    /** The route's worker address. */
    private readonly address: string,
    private done: AttemptCallback | undefined,
    private readonly counters: Counters,
    private pool: WorkerPool | undefined,
    private readonly outliers: OutlierDetector | undefined,
    /** Tracing on: this attempt's span, ended when the attempt is over (its body included). */
    private span: Span | undefined,
  ) {
    pool?.unsent.add(this);
  }

  // undici's callbacks: the worker's answer, inside the containment boundary. A throw in handling it (the chain's
  // response phase, the response writer, the body pump all run from here) ends this request alone.

  onUpgrade(status: number, raw: Buffer[] | string[] | null, socket: Duplex): void {
    try {
      this.#onUpgrade(status, raw, socket);
    } catch (err) {
      this.#internalError(err);
    }
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    try {
      return this.#onHeaders(status, raw, resume);
    } catch (err) {
      this.#internalError(err);
      return false;
    }
  }

  onData(chunk: Buffer): boolean {
    try {
      return this.#onData(chunk);
    } catch (err) {
      this.#internalError(err);
      return false;
    }
  }

  onComplete(trailers: UpstreamTrailers): void {
    try {
      this.#onComplete(trailers);
    } catch (err) {
      this.#internalError(err);
    }
  }

  onError(err: Error): void {
    try {
      this.#onError(err);
    } catch (err) {
      this.#internalError(err);
    }
  }

  /** Handling the worker's answer threw: the request ends (500 or a reset) and undici drops the upstream request. */
  #internalError(err: unknown): void {
    const abort = this.#abort;
    this.#state = State.Done;
    this.#sink = undefined;
    this.#held = undefined;
    this.done = undefined;
    this.#release();
    if (this.span !== undefined) this.#endSpan('internal-error');
    this.ctx.internalError('upstream-response', err);
    abort?.(err instanceof Error ? err : new Error(String(err)));
  }

  /** The worker's address went down before this attempt started writing: it fails at once, unsent. */
  eject(): void {
    if (this.#state !== State.Waiting || this.#started) return;
    this.#state = State.Done; // undici drops it unsent when it reaches a connection (`onConnect`)
    this.counters.tallies.upstream.outliers.failedFast++;
    this.#settle(EJECTED);
  }

  /** Ends the attempt's span once (`outcome`: how it ended, when not with the response handed on). */
  #endSpan(outcome: string | undefined, status?: number): void {
    const span = this.span;
    if (span === undefined) return;
    this.span = undefined;
    endUpstreamSpan(span, outcome, status);
  }

  /** undici: the worker answered 101 to an upgrade request and handed over its socket (the slot goes with it). */
  #onUpgrade(status: number, raw: Buffer[] | string[] | null, socket: Duplex): void {
    this.counters.countUpstream(status);
    this.#headAt();
    if (this.span !== undefined) this.#endSpan('response', status);
    const pool = this.pool;
    this.pool = undefined;
    this.#state = State.Done;
    const release = (): void => pool?.release();
    this.#settle(new UpstreamResponse(status, relayHeaders((raw ?? []) as Buffer[]), undefined, this, { socket: socket as Socket, release }));
  }

  /**
   * The client went away: stop the upstream request (no-op once it is complete). A request still queued in the
   * pool is reported cancelled at once; undici aborts it when it reaches a connection (`onConnect`), unsent.
   */
  cancel(): void {
    if (this.#state === State.Done) return;
    if (this.#abort !== undefined) {
      this.#abort(new Error('client closed the request'));
      return;
    }
    this.#state = State.Done;
    this.#settle(CANCELLED);
  }

  /** undici is done with the request (exactly one of onComplete / onError): its pool slot is free. */
  #release(): void {
    this.pool?.unsent.delete(this);
    this.pool?.release();
    this.pool = undefined;
  }

  /**
   * Reports the outcome once: an answer synchronously, anything else from a fresh microtask. Every attempt ends
   * here, HTTP/1.1, HTTP/2 and upgrades alike, so this is where the worker's counters see it.
   */
  #settle(outcome: UpstreamAttemptResult): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    this.pool?.unsent.delete(this);
    this.counters.workers.observe(this.address, outcome);
    if (outcome.kind === 'response') {
      done(this.ctx, outcome);
      return;
    }
    if (this.span !== undefined) this.#endSpan(outcome.kind);
    const ctx = this.ctx;
    queueMicrotask(() => done(ctx, outcome));
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    this.#started = true;
    this.pool?.unsent.delete(this);
    if (this.#state === State.Done || this.ctx.downstreamClosed) abort(new Error('client closed the request'));
  }

  /** undici: the request, body included, has been written to the socket. */
  onRequestSent(): void {
    this.#written = true;
  }

  #onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 100 Continue, 103 Early Hints: not relayed
    this.counters.countUpstream(status);
    this.#headAt();
    if (this.span !== undefined) this.span.setAttribute('http.response.status_code', status);
    if (isStaleRejection(status, raw)) {
      this.#state = State.Discarding;
      this.#settle(STALE);
      return true;
    }
    this.#resume = resume;
    this.#state = State.Headed;
    this.#settle(new UpstreamResponse(status, relayHeaders(raw), declaredTrailer(raw), this, undefined));
    // Still not piped (the chain waits for a promised decision): hold the body, paused until it is.
    this.#paused = this.#state === State.Headed;
    return !this.#paused;
  }

  /** The worker's response head arrived: the access log's upstream time. */
  #headAt(): void {
    const ctx = this.ctx;
    if (ctx.upstream === this) ctx.upstreamMs = performance.now() - ctx.upstreamStartedAt;
  }

  // UpstreamBody

  pipe(sink: BodySink): void {
    if (this.#state !== State.Headed) return;
    this.#state = State.Piped;
    this.#sink = sink;
    const held = this.#held;
    this.#held = undefined;
    let flowing = true;
    for (const chunk of held?.chunks ?? []) flowing = sink.data(chunk);
    if (held?.complete !== undefined) {
      this.#state = State.Done;
      sink.end(trailerList(held.complete.trailers));
      return;
    }
    // Piped before anything arrived, or after: resume what was paused (unless the sink paused it again).
    if (this.#paused && flowing) {
      this.#paused = false;
      this.#resume?.();
    }
  }

  resume(): void {
    if (this.#state === State.Piped) this.#resume?.();
  }

  abort(reason: string): void {
    if (this.span !== undefined) this.#endSpan('aborted');
    if (this.#state === State.Done && this.#abort === undefined) return;
    this.#state = State.Done;
    this.#sink = undefined;
    this.#held = undefined;
    this.#abort?.(new Error(reason));
  }

  failure(): UpstreamFailure | undefined {
    return this.#failure;
  }

  #onData(chunk: Buffer): boolean {
    if (this.#state === State.Piped) return (this.#sink as BodySink).data(chunk);
    if (this.#state === State.Headed) {
      (this.#held ??= { chunks: [], complete: undefined }).chunks.push(chunk);
      this.#paused = true;
      return false;
    }
    return true;
  }

  /** The upstream body is complete, with its trailers (if any). */
  #onComplete(trailers: UpstreamTrailers): void {
    this.#release();
    if (this.span !== undefined) this.#endSpan(undefined);
    if (this.#state === State.Headed) {
      (this.#held ??= { chunks: [], complete: undefined }).complete = { trailers };
      return;
    }
    const sink = this.#state === State.Piped ? this.#sink : undefined;
    this.#state = State.Done;
    this.#sink = undefined;
    sink?.end(trailerList(trailers));
  }

  #onError(err: Error): void {
    this.#release();
    const state = this.#state;
    this.#state = State.Done;
    if (this.span !== undefined && (state === State.Piped || state === State.Discarding)) this.#endSpan('body-error');
    if (state === State.Piped) {
      const sink = this.#sink as BodySink;
      this.#sink = undefined;
      sink.error(err);
      return;
    }
    if (state !== State.Waiting && state !== State.Headed) return;
    const seen = this.ctx.downstreamClosed
      ? CANCELLED // we aborted the upstream because the client left: that is not the worker failing
      : classifyFailure(err, this.#started, this.#written);
    // A connect that failed after the address went down (it was under way then) is failed fast, not a new failure.
    const outcome = seen.kind === 'connect-failed' && this.outliers?.isDown(this.address) === true ? EJECTED : seen;
    this.#count(outcome);
    if (state === State.Headed) {
      this.#held = undefined;
      this.#failure = outcome;
      if (this.span !== undefined) this.#endSpan(outcome.kind);
      return;
    }
    this.#settle(outcome);
    // After this attempt's outcome is on its way, so the requests it ejects re-run after it (one eviction, first).
    if (seen.kind === 'connect-failed') this.outliers?.connectFailed(this.address, seen.code);
  }

  #count(outcome: UpstreamFailure): void {
    if (outcome.kind === 'connect-failed') {
      if (outcome.ejected !== true) this.counters.tallies.upstream.connectFailures++; // failed fast: counted by the detector
    } else if (outcome.kind === 'reset') this.counters.tallies.upstream.resets++;
    else if (outcome.kind === 'identity-rejected') {
      this.counters.tallies.upstream.identityFailures++;
      this.ctx.log.warn({ worker: this.ctx.upstreamAddress, presented: outcome.presented, reason: outcome.reason }, 'upstream worker failed identity verification');
    }
  }
}
