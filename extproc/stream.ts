/**
 * One ext_proc Process stream (one HTTP request). Messages are answered strictly in order, one response each:
 * request headers are resolved (asynchronously); response headers, bodies and trailers get a plain CONTINUE.
 * When the data plane half-closes, the server finishes what is pending and ends the RPC with OK. Envoy then
 * usually resets the stream (CANCELLED): that is its normal way to end a stream, not an error.
 *
 * Idle timeout (`--stream-idle-timeout-ms`): a stream on which the data plane neither sends a message nor
 * half-closes for that long, while no answer is pending, ends with DEADLINE_EXCEEDED and is counted; otherwise a
 * data plane that never half-closes would hold the stream until its connection closes.
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
  /** 0: no idle timeout. */
  readonly idleTimeoutMs: number;
}

export function serveStream(call: ProcessCall, deps: StreamDeps): void {
  const { resolver, metrics, log, idleTimeoutMs } = deps;
  metrics.streamOpened();
  let idle: NodeJS.Timeout | undefined;
  const stopIdle = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    idle = undefined;
  };
  /** The data plane was heard from, or the last pending answer was written: the idle period starts again. */
  const restartIdle = (): void => {
    if (idle !== undefined) idle.refresh();
  };
  // Created only when a resolution is pending, so streams that end normally never pay for it.
  let abort: AbortController | undefined;
  let busy = false;
  let halfClosed = false;
  let ended = false;
  let closed = false;
  let queue: RequestSummary[] | undefined;

  const close = (): void => {
    if (closed) return;
    closed = true;
    stopIdle();
    metrics.streamClosed();
    if (busy) abort?.abort();
  };
  const write = (response: ProcessingResponse): void => {
    if (!ended && !call.cancelled) call.write(response);
  };
  const end = (): void => {
    if (ended) return;
    ended = true;
    stopIdle();
    if (!call.cancelled) call.end();
  };
  const drain = (): void => {
    while (!busy && queue && queue.length > 0) handle(queue.shift()!);
    if (!busy && halfClosed) end();
  };
  const handle = (message: RequestSummary): void => {
    const kind = message.request;
    if (kind === 'request_headers') {
      busy = true;
      abort ??= new AbortController();
      resolver.requestHeaders(message.authority, abort.signal).then(
        (response) => {
          busy = false;
          restartIdle();
          write(response);
          drain();
        },
        (err: unknown) => {
          log.error({ err }, 'request headers failed');
          busy = false;
          fail(grpc.status.INTERNAL, 'internal error');
        },
      );
    } else if (kind !== undefined && CONTINUE[kind]) {
      write(CONTINUE[kind]);
    } else {
      fail(grpc.status.INVALID_ARGUMENT, 'ProcessingRequest has no request set');
    }
  };
  let failed = false;
  const fail = (code: grpc.status, details: string): void => {
    if (ended) return;
    ended = true;
    failed = true;
    stopIdle();
    queue = undefined;
    log.warn({ code: grpc.status[code], details }, 'ext_proc stream rejected');
    if (!call.cancelled) call.emit('error', { code, details, metadata: new grpc.Metadata() });
  };

  if (idleTimeoutMs > 0) {
    idle = setTimeout(function expire(): void {
      if (busy) {
        // Still resolving: the server, not the data plane, is the one being waited for.
        idle?.refresh();
        return;
      }
      metrics.streamIdleTimeout();
      fail(grpc.status.DEADLINE_EXCEEDED, `stream idle for ${idleTimeoutMs} ms`);
    }, idleTimeoutMs);
    idle.unref();
  }

  call.on('data', (message: RequestSummary) => {
    if (ended) return;
    restartIdle();
    if (busy) (queue ??= []).push(message);
    else handle(message);
  });
  call.on('end', () => {
    halfClosed = true;
    stopIdle();
    if (!busy) end();
  });
  call.on('cancelled', close);
  call.on('close', close);
  call.on('finish', close);
  call.on('error', (err: grpc.ServiceError) => {
    if (!failed && err.code !== grpc.status.CANCELLED) log.warn({ code: err.code, details: err.details }, 'ext_proc stream error');
    close();
  });
}
