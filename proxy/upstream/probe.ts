/**
 * The outlier detector's probe of a down worker address: one connect attempt within the connect timeout — plain
 * TCP, or with mTLS the pools' own connector (TCP plus the TLS handshake, so a worker that accepts TCP and never
 * completes the handshake still fails its probe). A worker whose certificate is refused did connect: that is its
 * own outcome on the request path (`identity-rejected`), not a dead address. The connection is closed at once.
 */
import net from 'node:net';
import type { buildConnector } from 'undici';
import { UpstreamIdentityError } from './tls.js';

export interface ConnectProbeOptions {
  readonly connectTimeoutMs: number;
  /** The pools' TLS connector (mTLS to the workers); absent: a TCP connect. */
  readonly connector?: buildConnector.connector;
}

function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(address.slice(colon + 1)) };
}

export function createConnectProbe(opts: ConnectProbeOptions): (address: string) => Promise<boolean> {
  const { connector, connectTimeoutMs } = opts;
  if (connector !== undefined) {
    return (address) =>
      new Promise((resolve) => {
        const colon = address.lastIndexOf(':');
        const hostname = address.slice(0, colon);
        connector({ hostname, host: hostname, port: address.slice(colon + 1), protocol: 'https:', servername: '' } as buildConnector.Options, (err, socket) => {
          socket?.destroy();
          resolve(err === null || err instanceof UpstreamIdentityError);
        });
      });
  }
  return (address) =>
    new Promise((resolve) => {
      const { host, port } = splitAddress(address);
      const socket = net.connect({ host, port });
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), connectTimeoutMs);
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
}
