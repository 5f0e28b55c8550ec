/**
 * The ingress: a node:http server (keep-alive) that turns each client request into a `ProxyRequest`, hands it to
 * the chain, and finishes it — counters, duration histogram, access-log line, every filter's `onDone` — when the
 * response is closed. Limits are node's own: request head over 60 KiB → 431, head not received within
 * `--headers-timeout-ms` → 408 (whole request: `--request-timeout-ms`). A request target or Host the proxy does not
 * forward is answered before any filter runs (`request-target.ts`).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config.js';
import { MAX_HEADER_BYTES } from '../config.js';
import type { Chain } from '../chain/chain.js';
import type { Counters } from '../ops/stats.js';
import type { ProxyStage } from '../chain/stage.js';
import { CHAIN_DONE, ProxyRequest } from '../request/context.js';
import { ForwardHeaders } from '../request/headers.js';
import { RequestBody } from '../request/body.js';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { resolveRequestTarget } from './request-target.js';
import { ERRORS } from '../chain/errors.js';
import { sendError } from './local-reply.js';

export interface IngressDeps {
  readonly config: ProxyConfig;
  readonly chain: Chain;
  readonly counters: Counters;
  readonly observeDuration: (seconds: number) => void;
  readonly log: Logger;
  /** Stages contributing access-log fields. */
  readonly stages: readonly ProxyStage[];
}

const CTX = Symbol('actor-edge.ctx');
type TaggedResponse = ServerResponse & { [CTX]?: ProxyRequest };

export class Ingress {
  readonly server: http.Server;
  #inflight = 0;
  #draining = false;
  #idle: (() => void) | undefined;
  readonly #deps: IngressDeps;
  readonly #strip: ReadonlySet<string>;
  readonly #logFields: readonly ProxyStage[];

  constructor(deps: IngressDeps) {
    this.#deps = deps;
    const { config } = deps;
    this.#strip = new Set(config.stripHeaders);
    this.#logFields = deps.stages.filter((s) => s.logFields !== undefined);
    this.server = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        keepAliveTimeout: config.keepAliveTimeoutMs,
        connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.headersTimeoutMs / 4))),
        // The ingress checks Host itself (also for HTTP/1.0, and refuses duplicates).
        requireHostHeader: false,
        noDelay: true,
      },
      (req, res) => this.#onRequest(req, res),
    );
    // One listener per server, not per request: node calls it with `this` = the closed response.
    const ingress = this;
    this.#onClose = function (this: TaggedResponse) {
      ingress.#closed(this);
    };
    this.#onChainDone = (ctx: ProxyRequest) => {
      if (ctx.clientState === 'closed') this.#finish(ctx);
    };
  }

  readonly #onClose: (this: TaggedResponse) => void;
  readonly #onChainDone: (ctx: ProxyRequest) => void;

  get inflight(): number {
    return this.#inflight;
  }

  get draining(): boolean {
    return this.#draining;
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const startedAt = performance.now();
    this.#inflight++;
    const { config, chain, log } = this.#deps;
    const remote = req.socket.remoteAddress ?? '';
    const head = sanitiseRequestHeaders(req.rawHeaders, remote, 'http', this.#strip, config.xffTrustedHops);
    const target = resolveRequestTarget(req.url ?? '', head);
    const body = head.hasBody ? new RequestBody(req, config.maxReplayBodyBytes) : null;
    const ctx = new ProxyRequest({
      req,
      res,
      requestId: head.requestId,
      method: req.method ?? 'GET',
      path: target.path,
      authority: target.authority,
      scheme: 'http',
      remoteAddress: remote,
      headers: new ForwardHeaders(target.headers),
      body,
      startedAt,
      log,
    });
    (res as TaggedResponse)[CTX] = ctx;
    res.on('close', this.#onClose);
    if (this.#draining) res.shouldKeepAlive = false;
    if (target.kind === 'refuse') {
      sendError(ctx, target.error, target.details);
      ctx.chainState = CHAIN_DONE;
      return;
    }
    chain.run(ctx, this.#onChainDone);
  }

  /** The response closed: stop whatever still works for it, and finish once the chain is done too. */
  #closed(res: TaggedResponse): void {
    const ctx = res[CTX];
    if (ctx === undefined || ctx.clientState !== 'open') return;
    ctx.clientState = 'closed';
    res[CTX] = undefined;
    if (!res.writableFinished) {
      ctx.abortFilters();
      ctx.upstream?.cancel();
    }
    if (ctx.chainState.kind === 'done') this.#finish(ctx);
  }

  /**
   * Finishes one request — counters, duration, access log, every filter's onDone — when both its response has
   * closed and the chain has returned (a small response can close before the chain observed its headers).
   */
  #finish(ctx: ProxyRequest): void {
    if (ctx.clientState === 'finished') return;
    ctx.clientState = 'finished';
    const res = ctx.res;
    const { counters, chain, log, config } = this.#deps;
    let status: number;
    let error: Error | undefined;
    if (res.headersSent) {
      status = res.statusCode;
      if (!res.writableFinished) {
        ctx.responseState = 'truncated';
        error = new Error(ctx.details ?? 'response not completed: the client went away');
      }
    } else {
      status = ctx.error?.status ?? ERRORS.DOWNSTREAM_CLOSED.status;
      error = new Error(ctx.details ?? ERRORS.DOWNSTREAM_CLOSED.text);
    }
    // A request body the upstream did not read completely: the connection cannot carry another request.
    if (ctx.body !== null && ctx.body.started && !ctx.body.complete) ctx.req.socket?.destroy();
    ctx.status = status;
    counters.countResponse(status);
    const durationMs = performance.now() - ctx.startedAt;
    this.#deps.observeDuration(durationMs / 1000);
    if (config.accessLog) this.#accessLog(ctx, status, durationMs, log);
    chain.done(ctx, status, error);
    this.#inflight--;
    if (this.#draining) {
      this.server.closeIdleConnections();
      if (this.#inflight === 0) this.#idle?.();
    }
  }

  #accessLog(ctx: ProxyRequest, status: number, durationMs: number, log: Logger): void {
    const line: Record<string, unknown> = {
      requestId: ctx.requestId,
      method: ctx.method,
      authority: ctx.authority,
      path: ctx.path,
      status,
      durationMs: Math.round(durationMs * 1000) / 1000,
      upstream: ctx.upstreamAddress ?? null,
      extprocMs: ctx.extProc === undefined ? null : Math.round(ctx.extProc.elapsedMs * 1000) / 1000,
      attempts: ctx.attempt + 1,
    };
    if (ctx.route !== undefined) line.routeSource = ctx.route.source;
    if (ctx.error !== undefined) line.error = ctx.error.code;
    if (ctx.details !== undefined) line.details = ctx.details;
    if (ctx.responseState === 'truncated') line.aborted = true;
    for (const stage of this.#logFields) {
      const extra = stage.logFields?.(ctx);
      if (extra !== undefined) Object.assign(line, extra);
    }
    log.info(line, 'access');
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * Stops accepting connections and waits up to `timeoutMs` for in-flight requests. Resolves true when they all
   * finished; then (or on timeout) every connection is closed.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.#draining = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    let finished = this.#inflight === 0;
    if (!finished) {
      finished = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.#idle = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    }
    this.server.closeAllConnections();
    await closed;
    return finished;
  }
}
