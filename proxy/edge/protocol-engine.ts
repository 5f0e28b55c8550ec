/**
 * What the HTTP/1.1 and HTTP/2 engines share: the config and lifecycle they are built with, the tunnels, and the
 * drain's two hooks. The ingress drains an engine by `drain()` (it stops taking new work on its connections), waits
 * for `onSettled` until no connection is left, and ends the drain with `closeAll()`.
 */
import type { Socket } from 'node:net';
import type { TunnelHub } from '../tunnels/hub.js';
import type { EngineDeps, RequestLifecycle } from './lifecycle.js';

export abstract class ProtocolEngine<C> {
  protected readonly config: C;
  protected readonly lifecycle: RequestLifecycle;
  /** Upgrades and their tunnels (without it, the engine serves no upgrade). */
  protected readonly hub: TunnelHub | undefined;
  protected draining = false;
  /** Called when a connection closes (the drain waits on it). */
  onSettled: (() => void) | undefined;

  protected constructor(deps: EngineDeps<C>) {
    this.config = deps.config;
    this.lifecycle = deps.lifecycle;
    this.hub = deps.hub;
  }

  /** Serves a connection accepted by a listener. */
  abstract accept(socket: Socket): void;
  /** The drain begins. */
  abstract drain(): void;
  /** The end of a drain: every connection left is closed. */
  abstract closeAll(): void;
}
