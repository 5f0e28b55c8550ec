/**
 * The one writer of client responses: everything the client gets goes through here into the request's downstream
 * exchange — a local reply (`local`; a streamed one piece by piece, with backpressure), an upstream answer (`relay`: the head as the response phase left it, then the
 * body pumped chunk by chunk with backpressure both ways, then the trailers when the exchange can carry them), or
 * a tunnel (`tunnel`: the worker's 101 answered in the client's protocol and both sides relayed).
 *
 * Nothing the upstream sends can stop the process from here: a head or trailers the client's protocol refuses
 * (an HTTP/2 client and a connection-specific field, say), or a status outside 100–599, fail that one response —
 * the head becomes a 502, a trailer failure is logged and the response ends without them.
 */
import type { ProxyRequest } from '../request/context.js';
import { ERRORS, errorReply, type ProxyErrorSpec } from '../http/errors.js';
import { setRequestId, withRequestId, writeLocalReply, type MultiValueLocalReply } from '../http/local-reply.js';
import { relayTrailers } from '../http/trailers.js';
import { isGrpcRequest } from '../http/grpc.js';
import type { BodySink, UpstreamBody, UpstreamResponse } from '../upstream/response.js';
import { UpgradeTunnel, type TunnelDeps } from '../tunnels/upgrade-tunnel.js';

export type { TunnelDeps };

export class ResponseWriter {
  constructor(private readonly tunnels: TunnelDeps | undefined) {}

  /**
   * Writes a local reply (unless a response already started or the client is gone); its details go to the log,
   * and so does what went wrong later with a streamed body.
   */
  local(ctx: ProxyRequest, reply: MultiValueLocalReply): void {
    const written = writeLocalReply(ctx.exchange, reply, {
      grpc: isGrpcRequest(ctx.headers),
      headRequest: ctx.method === 'HEAD',
      note: (details) => (ctx.details = ctx.details === undefined ? details : `${ctx.details}; ${details}`),
      requestId: ctx.requestId,
      sent: (bytes) => (ctx.bytesOut += bytes),
    });
    if (written.kind === 'not-written') return;
    ctx.bytesOut += written.bytes;
    if (reply.details !== undefined) ctx.details = reply.details;
    if (written.invalid !== undefined) ctx.details = written.invalid;
  }

  /** Adds the worker's `Trailer` declaration to the head when the client response can carry trailers. */
  declareTrailer(ctx: ProxyRequest, response: UpstreamResponse): void {
    const trailer = response.trailer;
    if (trailer === undefined) return;
    const headers = response.headerList;
    if (ctx.exchange.trailersAllowed(ctx.method, response.status, headers)) headers.push('Trailer', trailer);
  }

  /** Writes the head (`headers`: this response's own list, given the request's id in place) and pumps the body into the exchange. */
  relay(ctx: ProxyRequest, response: UpstreamResponse, status: number, headers: string[]): void {
    const exchange = ctx.exchange;
    setRequestId(headers, ctx.requestId);
    try {
      // RFC 9110 §15: a status is 100–599. node's HTTP/2 refuses any other; its HTTP/1.1 would send it on.
      if (status < 100 || status > 599) throw new RangeError(`status ${status} is not from 100 to 599`);
      exchange.startResponse(status, headers);
    } catch (err) {
      // A head the client's protocol refuses: that response fails, the process and every other request go on.
      response.body.abort('the response head could not be written to the client');
      ctx.error = ERRORS.UPSTREAM_RESPONSE_INVALID;
      this.local(ctx, errorReply(ERRORS.UPSTREAM_RESPONSE_INVALID, `response head not relayed: ${(err as Error).message}`));
      return;
    }
    // The head is the client's now: no re-run can follow, so the request body's replay copy goes back to the budget.
    ctx.body?.stopRetaining();
    response.body.pipe(new BodyPump(ctx, response.body));
  }

  /**
   * A worker answered 101: answer the client in its protocol and relay both ways. Returns the catalog error to
   * answer instead when no tunnel can be opened here.
   */
  tunnel(ctx: ProxyRequest, response: UpstreamResponse): ProxyErrorSpec | undefined {
    const up = response.upgraded;
    if (up === undefined) return undefined;
    // The worker's socket is ours now: an error on it concerns this tunnel only (the tunnel listens once open).
    up.socket.on('error', () => undefined);
    const intent = ctx.upgrade;
    if (intent === undefined || this.tunnels === undefined) {
      up.socket.destroy();
      up.release();
      return ERRORS.UPGRADE_NOT_ACCEPTED;
    }
    let client;
    try {
      client = ctx.downstreamClosed ? undefined : ctx.exchange.openTunnel(response.status, withRequestId(response.headerList, ctx.requestId));
    } catch (err) {
      ctx.details = `upgrade not relayed: ${(err as Error).message}`;
      up.socket.destroy();
      up.release();
      return ERRORS.UPSTREAM_RESPONSE_INVALID;
    }
    if (client === undefined) {
      up.socket.destroy();
      up.release();
      return undefined;
    }
    ctx.tunnel = new UpgradeTunnel(client, up.socket, intent.head, this.tunnels, up.release);
    return undefined;
  }
}

/** One response's body on its way to the client. */
class BodyPump implements BodySink {
  readonly #resume: () => void;
  /** The upstream body ended, failed or was aborted: nothing more to pump. */
  #over = false;

  constructor(
    private readonly ctx: ProxyRequest,
    body: UpstreamBody,
  ) {
    this.#resume = () => body.resume();
    // The client's response can be over while the upstream body is not: a client that left, or an HTTP/2 stream
    // its head already ended (a 205 or 304 carries no content there). A drain will never come then; the upstream
    // request must not stay open for it (its pool connection would stay busy, and a drain wait forever).
    ctx.exchange.onClose(() => {
      if (this.#over) return;
      this.#over = true;
      body.abort('the client response is over before the upstream body');
    });
  }

  data(chunk: Buffer): boolean {
    const exchange = this.ctx.exchange;
    this.ctx.bytesOut += chunk.length;
    try {
      if (exchange.sendBody(chunk)) return true;
      exchange.whenWritable(this.#resume);
    } catch (err) {
      this.#failed(err);
    }
    return false;
  }

  end(trailers: readonly (Buffer | string)[] | null): void {
    this.#over = true;
    const exchange = this.ctx.exchange;
    // The exchange sends them when its response can carry them (an HTTP/1.1 response only when chunked).
    const pairs = trailers !== null && trailers.length > 0 ? relayTrailers(trailers) : undefined;
    try {
      if (pairs === undefined || pairs.length === 0) exchange.finishResponse();
      else exchange.finishResponse(undefined, pairs);
    } catch (err) {
      this.ctx.details ??= `upstream trailers not relayed: ${(err as Error).message}`;
      try {
        if (!exchange.gone) exchange.finishResponse();
      } catch (again) {
        this.#failed(again);
      }
    }
  }

  /** Writing to the client threw: this response is cut off, nothing else is affected. */
  #failed(err: unknown): void {
    this.ctx.details ??= `response not relayed: ${(err as Error)?.message ?? String(err)}`;
    this.ctx.exchange.abortResponse();
  }

  error(err: Error): void {
    this.#over = true;
    // The response had started: the client can only see it cut off.
    this.ctx.details ??= `upstream response aborted: ${(err as { code?: string }).code ?? err.message}`;
    this.ctx.exchange.abortResponse();
  }
}
