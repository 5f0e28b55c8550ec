/**
 * An upgraded connection after the worker's 101: the client's socket and the worker's socket relay bytes both ways
 * (`pipe`, so a side that stops reading back-pressures the other: the proxy holds at most one socket buffer per
 * direction), with half-close (a side's FIN is passed on; the other side may still send), and an idle timeout (no
 * byte either way for `--tunnel-idle-timeout-ms`). When either socket closes for good, the other is closed too: a
 * tunnel is never re-run once open. The tunnel reports to the hub once both sockets are closed.
 *
 * A WebSocket over HTTP/2 (RFC 8441, `edge/h2-websocket.ts`) has an HTTP/2 stream as its client side: the
 * worker's 101 is answered `:status 200` on the stream, and the stream relays the bytes the same way (the
 * stream's flow control is its backpressure); its end is the client's FIN, its reset the client's close.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Http2ServerResponse } from 'node:http2';
import type { ProxyRequest } from '../request/context.js';
import type { OpenedUpgrade, UpgradeIntent } from '../request/upgrade-intent.js';
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';
import type { OpenTunnel, TunnelHub } from './tunnel-hub.js';
import { relayHeaders } from '../edge/response-headers.js';
import { ResponseOutcome } from './outcome.js';

export interface TunnelDeps {
  readonly hub: TunnelHub;
  readonly idleTimeoutMs: number;
}

/** Writes the 101 to the client and opens the tunnel; the pool slot (`release`) is held until it closes. */
export function relayUpgrade(
  ctx: ProxyRequest,
  intent: UpgradeIntent,
  status: number,
  raw: readonly Buffer[],
  upstream: Socket,
  release: () => void,
  deps: TunnelDeps,
): ResponseOutcome {
  if (ctx.protocol === 'h2') return relayH2Upgrade(ctx, status, raw, upstream, release, deps);
  const client = ctx.req.socket;
  const headers = relayHeaders(raw);
  if (ctx.downstreamClosed || client.destroyed) {
    upstream.destroy();
    release();
    return new ResponseOutcome(status, headers);
  }
  ctx.res.detachSocket(client);
  let head = `HTTP/1.1 ${status} Switching Protocols\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  head += `Connection: Upgrade\r\nUpgrade: ${intent.token}\r\n\r\n`;
  client.write(head, 'latin1');
  ctx.responseState = 'started';
  const tunnel = new UpgradeTunnel(client, upstream, intent.head, deps, release);
  intent.opened(tunnel);
  return new ResponseOutcome(status, headers);
}

/** The handshake headers that have no meaning on HTTP/2 (RFC 8441 §5: the 200 replaces the 101's accept key). */
const H2_HANDSHAKE_DROP: ReadonlySet<string> = new Set(['sec-websocket-accept']);

/** RFC 8441: the worker's 101 becomes `:status 200` on the client's stream, which then carries the tunnel. */
function relayH2Upgrade(ctx: ProxyRequest, status: number, raw: readonly Buffer[], upstream: Socket, release: () => void, deps: TunnelDeps): ResponseOutcome {
  const res = ctx.res as unknown as Http2ServerResponse;
  const stream = res.stream;
  const headers = relayHeaders(raw);
  if (ctx.downstreamClosed || stream.destroyed) {
    upstream.destroy();
    release();
    return new ResponseOutcome(status, headers);
  }
  const answer: Record<string, string | string[]> = {};
  for (let i = 0; i < headers.length; i += 2) {
    const name = (headers[i] as string).toLowerCase();
    if (H2_HANDSHAKE_DROP.has(name)) continue;
    const prev = answer[name];
    const value = headers[i + 1] as string;
    answer[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  res.writeHead(200, answer);
  ctx.responseState = 'started';
  const tunnel = new UpgradeTunnel(stream, upstream, Buffer.alloc(0), deps, release, countedBytes(stream, upstream));
  ctx.upgrade?.opened(tunnel);
  return new ResponseOutcome(status, headers);
}

/** Bytes through the client's side, from a socket's own counters (less what was read before the tunnel). */
function socketBytes(client: Socket, head: Buffer): () => TunnelBytes {
  const readBase = client.bytesRead - head.length;
  const writtenBase = client.bytesWritten;
  return () => ({ fromClient: client.bytesRead - readBase, toClient: client.bytesWritten - writtenBase });
}

/** Bytes through a client side without byte counters (an HTTP/2 stream): what it delivered, what went to it. */
function countedBytes(client: Duplex, upstream: Socket): () => TunnelBytes {
  const bytes = { fromClient: 0, toClient: 0 };
  client.on('data', (chunk: Buffer) => (bytes.fromClient += chunk.length));
  upstream.on('data', (chunk: Buffer) => (bytes.toClient += chunk.length));
  return () => ({ ...bytes });
}

type Listener = () => void;

export class UpgradeTunnel implements OpenTunnel, OpenedUpgrade {
  readonly kind = 'upgrade' as const;
  readonly openedAt = performance.now();
  #reason: TunnelCloseReason | undefined;
  #open = 2;
  #idle: NodeJS.Timeout | undefined;
  readonly #bytes: () => TunnelBytes;
  readonly #closeListeners: Listener[] = [];
  #finalBytes: TunnelBytes | undefined;

  constructor(
    private readonly client: Duplex,
    private readonly upstream: Socket,
    head: Buffer,
    private readonly deps: TunnelDeps,
    private readonly release: () => void,
    /** Bytes so far; by default the client socket's counters (bytes already read past the request head belong to the tunnel). */
    bytes: () => TunnelBytes = socketBytes(client as Socket, head),
  ) {
    this.#bytes = bytes;
    deps.hub.opened(this);
    upstream.allowHalfOpen = true; // the worker's FIN is passed on, not answered with ours
    upstream.setNoDelay(true);
    if (head.length > 0) upstream.write(head);
    this.#wire(client, upstream, 'client');
    this.#wire(upstream, client, 'upstream');
    if (deps.idleTimeoutMs > 0) {
      this.#idle = setTimeout(() => this.close('idle'), deps.idleTimeoutMs);
      const touch = (): void => void this.#idle?.refresh();
      client.on('data', touch);
      upstream.on('data', touch);
    }
    client.resume();
  }

  #wire(from: Duplex, to: Duplex, side: 'client' | 'upstream'): void {
    from.pipe(to);
    from.once('end', () => (this.#reason ??= side));
    from.on('error', () => {
      this.#reason ??= side;
      to.destroy();
    });
    from.once('close', () => {
      this.#reason ??= side;
      // Nothing more can go to or come from this side: finish the other once its pending bytes are out.
      if (side === 'client') to.destroy();
      else if (!to.destroyed) to.end(() => to.destroy());
      if (--this.#open === 0) this.#closed();
    });
  }

  bytes(): TunnelBytes {
    return this.#finalBytes ?? this.#bytes();
  }

  get reason(): TunnelCloseReason | undefined {
    return this.#reason;
  }

  /** Called once when both sides are closed (after the hub counted it). */
  onClose(listener: Listener): void {
    this.#closeListeners.push(listener);
  }

  close(reason: TunnelCloseReason): void {
    this.#reason ??= reason;
    this.client.destroy();
    this.upstream.destroy();
  }

  #closed(): void {
    clearTimeout(this.#idle);
    this.#finalBytes = this.bytes();
    this.release();
    this.deps.hub.closed(this, this.#reason ?? 'client', this.#finalBytes);
    for (const l of this.#closeListeners) l();
  }
}
