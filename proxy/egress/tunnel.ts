/**
 * One egress tunnel: the actor's side (its TLS connection for an HTTP/1.1 CONNECT, its stream for an HTTP/2 one)
 * and the TCP connection to the destination relay bytes both ways with `pipe`, so a side that stops reading
 * back-pressures the other (the proxy holds at most a buffer per direction; an HTTP/2 stream's flow control is its
 * backpressure). Half-close both ways: a side's end is passed on (FIN, or END_STREAM), and the other side may still
 * send. A side that fails ends the other at once (the destination's failure resets an HTTP/2 stream with
 * CONNECT_ERROR). No byte either way for the idle timeout, or the lifetime reached, closes both sides. The tunnel
 * reports once, when both sides are closed, with who closed it and the bytes each way.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { EgressBytes, EgressCloseReason } from './egress-stats.js';

/** The actor's side of a tunnel. */
export interface ActorSide {
  readonly stream: Duplex;
  /** Ends it as a failure (a socket destroyed; an HTTP/2 stream reset with CONNECT_ERROR). */
  abort(): void;
}

export interface TunnelLimits {
  /** 0: none. */
  readonly idleTimeoutMs: number;
  /** 0: none. */
  readonly maxLifetimeMs: number;
}

export interface TunnelHooks {
  /** `fn` as an event handler inside the containment boundary (a throw closes this tunnel alone, `internal`). */
  contained<A extends unknown[]>(tunnel: EgressTunnel, fn: (...args: A) => void): (...args: A) => void;
  /** Called once, when both sides are closed. */
  closed(tunnel: EgressTunnel, reason: EgressCloseReason, bytes: EgressBytes, durationMs: number): void;
}

export class EgressTunnel {
  readonly openedAt = performance.now();
  #reason: EgressCloseReason | undefined;
  #open = 2;
  readonly #bytes: EgressBytes;
  readonly #timers: NodeJS.Timeout[] = [];
  #idle: NodeJS.Timeout | undefined;
  #done = false;

  /** `head`: bytes the actor sent after its CONNECT head (the tunnel's first bytes). */
  constructor(
    private readonly actor: ActorSide,
    private readonly destination: Socket,
    head: Buffer,
    limits: TunnelLimits,
    private readonly hooks: TunnelHooks,
  ) {
    this.#bytes = { fromActor: head.length, toActor: 0 };
    const client = actor.stream;
    destination.setNoDelay(true);
    client.on('data', (chunk: Buffer) => {
      this.#bytes.fromActor += chunk.length;
      this.#idle?.refresh();
    });
    destination.on('data', (chunk: Buffer) => {
      this.#bytes.toActor += chunk.length;
      this.#idle?.refresh();
    });
    if (limits.idleTimeoutMs > 0) {
      this.#idle = setTimeout(hooks.contained(this, () => this.close('idle')), limits.idleTimeoutMs);
      this.#timers.push(this.#idle);
    }
    if (limits.maxLifetimeMs > 0) this.#timers.push(setTimeout(hooks.contained(this, () => this.close('lifetime')), limits.maxLifetimeMs));
    if (head.length > 0) destination.write(head);
    client.once('end', () => (this.#reason ??= 'actor'));
    destination.once('end', () => (this.#reason ??= 'destination'));
    client.on('error', hooks.contained(this, () => {
      this.#reason ??= 'actor';
      destination.destroy();
    }));
    destination.on('error', hooks.contained(this, () => {
      this.#reason ??= 'destination';
      actor.abort();
    }));
    client.once('close', hooks.contained(this, () => {
      this.#reason ??= 'actor';
      // Nothing more can come from or go to the actor: the destination connection has no one to serve.
      destination.destroy();
      this.#sideClosed();
    }));
    destination.once('close', hooks.contained(this, () => {
      this.#reason ??= 'destination';
      // The destination is done both ways: finish the actor's side once what it still has to read is out.
      if (!client.destroyed && !client.writableEnded) client.end();
      this.#sideClosed();
    }));
    client.pipe(destination);
    destination.pipe(client);
  }

  get reason(): EgressCloseReason | undefined {
    return this.#reason;
  }

  get closed(): boolean {
    return this.#done;
  }

  bytes(): EgressBytes {
    return { ...this.#bytes };
  }

  /** Closes both sides now (the limits, the drain, an internal error). */
  close(reason: EgressCloseReason): void {
    this.#reason ??= reason;
    this.destination.destroy();
    this.actor.abort();
  }

  #sideClosed(): void {
    if (--this.#open > 0 || this.#done) return;
    this.#done = true;
    for (const t of this.#timers) clearTimeout(t);
    this.hooks.closed(this, this.#reason ?? 'actor', this.bytes(), performance.now() - this.openedAt);
  }
}
