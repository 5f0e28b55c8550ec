/**
 * Upgrade requests at the ingress (node:http's `'upgrade'` event): a WebSocket handshake is an ordinary request
 * for the chain — user filters, the actor cache or ext_proc, the router, and re-runs (a worker's 421 + stale on the
 * handshake evicts and re-runs it like any request; a handshake has no body, so it is always replayable). The
 * router forwards it as an upgrade; on the worker's 101 it relays the head and opens the tunnel
 * (`upstream/tunnel.ts`). Any other answer is relayed as it is, with `Connection: close` (the connection was
 * handed over by node's HTTP parser and serves nothing more).
 *
 * The request is finished — counters, access log (status 101 with the tunnel's duration, bytes and close reason),
 * every filter's `onDone` — when the tunnel closes, or when the answer is done and the connection closed.
 * While the proxy drains, an upgrade request is answered 503 `PROXY_ERR_DRAINING`.
 */
import { finalStatus } from './final-status.js';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config.js';
import type { Chain } from '../chain/chain.js';
import type { Counters } from '../ops/stats.js';
import type { ProxyStage } from '../chain/stage.js';
import type { TunnelHub } from '../upstream/tunnel-hub.js';
import type { OpenedUpgrade } from '../request/upgrade-intent.js';
import { CHAIN_DONE, ProxyRequest } from '../request/context.js';
import { ForwardHeaders } from '../request/headers.js';
import { ERRORS, type ProxyErrorSpec } from '../chain/errors.js';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { resolveRequestTarget } from './request-target.js';
import { sendError } from './local-reply.js';
import { ClientConnection } from './client-connection.js';
import { decideUpgrade } from './upgrade-request.js';

export interface UpgradeDeps {
  readonly config: ProxyConfig;
  readonly chain: Chain;
  readonly counters: Counters;
  readonly log: Logger;
  readonly stages: readonly ProxyStage[];
  readonly hub: TunnelHub;
}

export class UpgradeHandler {
  readonly #strip: ReadonlySet<string>;
  readonly #logFields: readonly ProxyStage[];

  constructor(private readonly deps: UpgradeDeps) {
    this.#strip = new Set(deps.config.stripHeaders);
    this.#logFields = deps.stages.filter((s) => s.logFields !== undefined);
  }

  /** node:http `'upgrade'`: `head` holds the bytes the client sent after its request head. */
  handle(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const startedAt = performance.now();
    const { config, log, hub } = this.deps;
    const conn = ClientConnection.of(socket);
    if (conn !== undefined) conn.tunnel = true; // drains with the tunnels, not as an idle keep-alive connection
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => socket.destroySoon());
    const remote = socket.remoteAddress ?? '';
    const sanitised = sanitiseRequestHeaders(req.rawHeaders, remote, 'http', this.#strip, config.xffTrustedHops);
    const target = resolveRequestTarget(req.url ?? '', sanitised);
    const ctx = new ProxyRequest({
      req,
      res,
      requestId: sanitised.requestId,
      method: req.method ?? 'GET',
      path: target.path,
      authority: target.authority,
      scheme: 'http',
      remoteAddress: remote,
      headers: new ForwardHeaders(target.headers),
      body: null,
      startedAt,
      log,
    });
    const run = new UpgradeRun(ctx, this);
    socket.once('close', () => run.socketClosed());
    const decision = decideUpgrade(req, config.upgradeTokens);
    if (target.kind === 'refuse') return run.refuse(target.error, target.details);
    if (decision.kind === 'refuse') return run.refuse(ERRORS.UPGRADE_REFUSED, decision.details);
    if (decision.kind === 'forward') {
      if (hub.draining) return run.refuse(ERRORS.DRAINING, 'upgrade while draining');
      ctx.upgrade = { token: decision.token, head, opened: (t) => run.opened(t) };
    }
    this.deps.chain.run(ctx, () => run.chainDone());
  }

  /** Counters, access log and every filter's onDone, once. */
  finish(ctx: ProxyRequest, tunnel: OpenedUpgrade | undefined): void {
    const { counters, chain, config, log } = this.deps;
    const { status, error } = tunnel !== undefined ? { status: 101, error: undefined } : finalStatus(ctx);
    ctx.status = status;
    counters.countResponse(status);
    if (config.accessLog) log.info(this.#accessLine(ctx, status, tunnel), 'access');
    chain.done(ctx, status, error);
  }

  #accessLine(ctx: ProxyRequest, status: number, tunnel: OpenedUpgrade | undefined): Record<string, unknown> {
    const line: Record<string, unknown> = {
      requestId: ctx.requestId,
      method: ctx.method,
      authority: ctx.authority,
      path: ctx.path,
      status,
      durationMs: Math.round((performance.now() - ctx.startedAt) * 1000) / 1000,
      upstream: ctx.upstreamAddress ?? null,
      attempts: ctx.attempt + 1,
      upgrade: ctx.upgrade?.token ?? null,
    };
    if (tunnel !== undefined) {
      const bytes = tunnel.bytes();
      line.tunnel = {
        durationMs: Math.round(performance.now() - tunnel.openedAt),
        bytesFromClient: bytes.fromClient,
        bytesToClient: bytes.toClient,
        closedBy: tunnel.reason,
      };
    }
    if (ctx.route !== undefined) line.routeSource = ctx.route.source;
    if (ctx.error !== undefined) line.error = ctx.error.code;
    if (ctx.details !== undefined) line.details = ctx.details;
    for (const stage of this.#logFields) {
      const extra = stage.logFields?.(ctx);
      if (extra !== undefined) Object.assign(line, extra);
    }
    return line;
  }

  get hub(): TunnelHub {
    return this.deps.hub;
  }
}

/** One upgrade request from arrival to finish: the chain, then the tunnel or the answer, then the socket's close. */
class UpgradeRun {
  #tunnel: OpenedUpgrade | undefined;
  #socketClosed = false;
  #tunnelClosed = false;

  constructor(
    private readonly ctx: ProxyRequest,
    private readonly handler: UpgradeHandler,
  ) {}

  refuse(spec: ProxyErrorSpec, details: string): void {
    if (spec === ERRORS.UPGRADE_REFUSED || spec === ERRORS.DRAINING) this.handler.hub.refused('upgrade');
    sendError(this.ctx, spec, details);
    this.ctx.chainState = CHAIN_DONE;
    this.#maybeFinish();
  }

  opened(tunnel: OpenedUpgrade): void {
    this.#tunnel = tunnel;
    tunnel.onClose(() => {
      this.#tunnelClosed = true;
      this.#maybeFinish();
    });
  }

  chainDone(): void {
    this.#maybeFinish();
  }

  /** The client connection closed: before a tunnel opened, whatever still works for the request stops. */
  socketClosed(): void {
    this.#socketClosed = true;
    const ctx = this.ctx;
    if (this.#tunnel === undefined && ctx.clientState === 'open') {
      ctx.clientState = 'closed';
      if (ctx.chainState.kind !== 'done' && !ctx.res.writableFinished) {
        ctx.res.destroy();
        ctx.abortFilters();
        ctx.upstream?.cancel();
      }
    }
    this.#maybeFinish();
  }

  #maybeFinish(): void {
    const ctx = this.ctx;
    if (ctx.chainState.kind !== 'done' || ctx.clientState === 'finished') return;
    if (this.#tunnel !== undefined ? !this.#tunnelClosed : !this.#socketClosed) return;
    ctx.clientState = 'finished';
    this.handler.finish(ctx, this.#tunnel);
  }
}

/**
 * Hooks the handler into an HTTP/1.1 server: `'upgrade'` requests, and `'connect'` (a CONNECT on the ingress
 * itself has an authority-form target, refused by `request-target.ts` as any such target; tunnels have their own
 * listener, `connect-listener.ts`).
 */
export function attachUpgrades(server: Server, handler: UpgradeHandler): void {
  const handle = (req: IncomingMessage, socket: Duplex, head: Buffer): void => handler.handle(req, socket as Socket, head);
  server.on('upgrade', handle);
  server.on('connect', handle);
}
