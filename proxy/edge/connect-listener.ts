/**
 * The CONNECT listener (`--connect-listen`): `CONNECT <actor host>:<port>` is answered 200, and the tunnel's bytes
 * become a new HTTP/1.1 connection into the ingress itself — each request inside is routed, cached, re-run and
 * logged exactly like a direct one (by its own Host, as any request). Refused, each with its catalog answer and
 * the connection closed: a target without a port (400 `PROXY_ERR_CONNECT_NO_PORT`), a host that names no actor
 * (404 `PROXY_ERR_CONNECT_NOT_ACTOR`), any CONNECT while the proxy drains (503 `PROXY_ERR_DRAINING`), any other
 * method (405 `PROXY_ERR_CONNECT_ONLY`).
 *
 * The inner connection then lives as an ingress connection (keep-alive timeout, drain: `Connection: close` and the
 * idle grace). The tunnel's access-log line (`msg: "tunnel"`) is written when its socket closes: duration, bytes
 * each way, and who closed it (`client`, or `upstream`: the ingress side, or `drain`).
 *
 * The TLS variant (`--connect-tls-listen`, an HTTPS proxy) serves the same CONNECT over TLS with the ingress's
 * serving certificate (`--tls-cert`, `--tls-key`, rotated from its files as the HTTPS listener's): once the
 * handshake is done, the decrypted connection is handled exactly as a plaintext one.
 */
import http, { type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { parseActorHost } from '../../lib/actor-ref.js';
import { MAX_HEADER_BYTES, type ProxyConfig } from '../config.js';
import { ERRORS, type ProxyErrorSpec } from '../chain/errors.js';
import type { OpenTunnel, TunnelHub } from '../upstream/tunnel-hub.js';
import type { TunnelBytes, TunnelCloseReason } from '../ops/tunnel-stats.js';
import { CertificateWatch } from './certificate-watch.js';
import { loadCertificate, TLS_MIN_VERSION, type TlsFiles } from './tls-certificate.js';

export interface ConnectDeps {
  readonly config: ProxyConfig;
  readonly hub: TunnelHub;
  readonly log: Logger;
  /** The ingress server the tunnelled connections are handed to. */
  readonly ingress: http.Server;
  /** With these files, the listener speaks TLS (`--connect-tls-listen`). */
  readonly tls?: TlsFiles;
}

const PORT = /:([0-9]{1,5})$/;

/** Why a CONNECT target is refused, or undefined when it is `<actor host>:<port>`. */
export function refuseConnectTarget(target: string, actorSuffix: string): { spec: ProxyErrorSpec; details: string } | undefined {
  const port = PORT.exec(target);
  if (port === null || Number(port[1]) < 1 || Number(port[1]) > 65535) return { spec: ERRORS.CONNECT_NO_PORT, details: `CONNECT target "${target}" has no port` };
  const parsed = parseActorHost(target, actorSuffix);
  if (parsed.kind === 'invalid') return { spec: ERRORS.CONNECT_NOT_ACTOR, details: `CONNECT target: ${parsed.reason}` };
  return undefined;
}

/** A local answer written on the raw socket, which is then closed. */
function answerAndClose(socket: Duplex, spec: ProxyErrorSpec): void {
  const body = `${spec.text}\n`;
  const reason = http.STATUS_CODES[spec.status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${spec.status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export class ConnectListener {
  /** The HTTP/1.1 engine that reads the CONNECT requests. */
  readonly engine: http.Server;
  /** The listening socket: the engine itself, or the TLS server feeding it. */
  readonly server: net.Server;
  readonly #certificate: CertificateWatch | undefined;
  #closed: Promise<void> | undefined;

  /** Throws `TlsCertificateError` when the TLS variant's certificate files are missing or unusable. */
  constructor(private readonly deps: ConnectDeps) {
    const { config } = deps;
    this.engine = http.createServer(
      { maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: config.headersTimeoutMs, requireHostHeader: false, noDelay: true },
      (_req, res) => {
        const spec = ERRORS.CONNECT_ONLY;
        res.shouldKeepAlive = false;
        res.writeHead(spec.status, { 'content-type': 'text/plain; charset=utf-8', allow: 'CONNECT' });
        res.end(`${spec.text}\n`);
      },
    );
    this.engine.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#onConnect(req, socket as Socket, head));
    if (deps.tls === undefined) {
      this.server = this.engine;
      return;
    }
    const initial = loadCertificate(deps.tls);
    const server = tls.createServer(
      { cert: initial.cert, key: initial.key, minVersion: TLS_MIN_VERSION, ALPNProtocols: ['http/1.1'], noDelay: true, handshakeTimeout: config.headersTimeoutMs },
      (socket) => this.engine.emit('connection', socket),
    );
    server.on('tlsClientError', () => undefined); // a failed handshake concerns one client only
    this.#certificate = new CertificateWatch(deps.tls, initial, (loaded) => server.setSecureContext({ cert: loaded.cert, key: loaded.key, minVersion: TLS_MIN_VERSION }), deps.log);
    this.server = server;
  }

  #onConnect(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const { hub, log, config } = this.deps;
    const target = req.url ?? '';
    const refusal = hub.draining ? { spec: ERRORS.DRAINING, details: 'CONNECT while draining' } : refuseConnectTarget(target, config.actorSuffix);
    if (refusal !== undefined) {
      hub.refused('connect');
      if (config.accessLog) log.info({ kind: 'connect', target, status: refusal.spec.status, error: refusal.spec.code, details: refusal.details }, 'tunnel');
      answerAndClose(socket, refusal.spec);
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    const tunnel = new ConnectTunnel(socket, head, hub, (t, reason) => {
      if (!config.accessLog) return;
      const bytes = t.bytes();
      log.info(
        {
          kind: 'connect',
          target,
          remote: socket.remoteAddress ?? null,
          status: 200,
          durationMs: Math.round(performance.now() - t.openedAt),
          bytesFromClient: bytes.fromClient,
          bytesToClient: bytes.toClient,
          closedBy: reason,
        },
        'tunnel',
      );
    });
    if (head.length > 0) socket.unshift(head);
    this.deps.ingress.emit('connection', socket);
    void tunnel;
  }

  async listen(host: string, port: number): Promise<void> {
    this.server.listen(port, host);
    await once(this.server, 'listening'); // rejects on 'error'
  }

  /** Stops accepting (open tunnels are untouched: they drain as ingress connections). */
  stopAccepting(): Promise<void> {
    this.#certificate?.close();
    return (this.#closed ??= new Promise<void>((resolve) => net.Server.prototype.close.call(this.server, () => resolve())));
  }
}

/** A CONNECT tunnel: its socket now carries an ingress connection; accounted until it closes. */
class ConnectTunnel implements OpenTunnel {
  readonly kind = 'connect' as const;
  readonly openedAt = performance.now();
  readonly #readBase: number;
  readonly #writtenBase: number;
  #reason: TunnelCloseReason | undefined;
  #final: TunnelBytes | undefined;

  constructor(
    private readonly socket: Socket,
    head: Buffer,
    hub: TunnelHub,
    onClosed: (t: ConnectTunnel, reason: TunnelCloseReason) => void,
  ) {
    this.#readBase = socket.bytesRead - head.length;
    this.#writtenBase = socket.bytesWritten;
    hub.opened(this);
    socket.once('end', () => (this.#reason ??= 'client'));
    socket.once('close', () => {
      this.#final = this.bytes();
      const reason = this.#reason ?? 'upstream';
      hub.closed(this, reason, this.#final);
      onClosed(this, reason);
    });
  }

  bytes(): TunnelBytes {
    return this.#final ?? { fromClient: this.socket.bytesRead - this.#readBase, toClient: this.socket.bytesWritten - this.#writtenBase };
  }

  close(reason: TunnelCloseReason): void {
    this.#reason ??= reason;
    this.socket.destroy();
  }
}
