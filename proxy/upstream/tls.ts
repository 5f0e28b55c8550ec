/**
 * mTLS to the workers. The proxy presents the client certificate from its credential bundle and accepts a worker
 * only when (1) the worker's chain verifies against the trust bundle and (2) one of the worker's URI SANs starts
 * with the SPIFFE prefix. The worker is never checked by IP or name: its certificate carries only its SPIFFE URI.
 *
 * Both checks run before the connection is handed to the HTTP client; a worker that fails either is an
 * `UpstreamIdentityError` (its own outcome, `identity-rejected`, never a connect failure). Each new connection
 * uses the credentials current at that moment (the files are watched, `lib/tls/watched.ts`); pooled connections
 * keep theirs. ALPN offers one protocol: `http/1.1` for the pools, `h2` for gRPC (`h2-sessions.ts`).
 */
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import { readCredentialBundle, readTrustBundle } from '../../lib/tls/files.js';
import { presentedIdentity, refuseServerIdentity, uriSans } from '../../lib/tls/identity.js';
import { WatchedTlsFiles } from '../../lib/tls/watched.js';
import type { Logger } from '../../lib/logger.js';

export const UPSTREAM_IDENTITY_CODE = 'ERR_UPSTREAM_IDENTITY';

/** A worker whose certificate failed verification. `presented`: its SANs (or subject) as it presented them. */
export class UpstreamIdentityError extends Error {
  override readonly name = 'UpstreamIdentityError';
  readonly code = UPSTREAM_IDENTITY_CODE;
  constructor(
    readonly presented: string,
    readonly reason: string,
  ) {
    super(`upstream identity rejected (${reason}); presented ${presented}`);
  }
}

export interface UpstreamTlsFiles {
  readonly credentialBundle: string;
  readonly trustBundle: string;
}

/** The proxy's side of one handshake: its credentials and the CAs it trusts, ready to use. */
export interface UpstreamTlsMaterial {
  readonly context: tls.SecureContext;
  /** The proxy's own URI SANs (for logs). */
  readonly identity: readonly string[];
}

/** Reads both files; throws a TlsFileError that names the flag and file. */
export function loadUpstreamTls(files: UpstreamTlsFiles): UpstreamTlsMaterial {
  const bundle = readCredentialBundle(files.credentialBundle, '--upstream-credential-bundle');
  const ca = readTrustBundle(files.trustBundle, '--upstream-trust-bundle');
  return {
    context: tls.createSecureContext({ cert: bundle.cert, key: bundle.key, ca, minVersion: 'TLSv1.2' }),
    identity: uriSans(bundle.leaf.subjectAltName),
  };
}

export interface TlsConnectorOptions {
  /** The material to use for a new connection (read at each connect). */
  readonly material: () => UpstreamTlsMaterial;
  readonly spiffePrefix: string;
  readonly connectTimeoutMs: number;
  /** The one ALPN protocol offered (default `http/1.1`). */
  readonly alpn?: 'http/1.1' | 'h2';
}

function connectTimeout(): Error {
  return Object.assign(new Error('upstream TLS connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
}

/** An undici connector that opens a verified mTLS connection to a worker's literal `ip:port`. */
export function createTlsConnector(opts: TlsConnectorOptions): buildConnector.connector {
  const checkServerIdentity = (_host: string, cert: tls.PeerCertificate): Error | undefined => {
    const why = refuseServerIdentity(cert.subjectaltname, opts.spiffePrefix);
    return why === undefined ? undefined : new Error(why);
  };
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    let settled = false;
    const settle = (err: Error | null, socket: tls.TLSSocket | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err !== null) {
        socket?.destroy();
        callback(err, null);
      } else {
        callback(null, socket as tls.TLSSocket);
      }
    };
    const socket = tls.connect({
      host,
      port: Number(options.port),
      secureContext: opts.material().context,
      ALPNProtocols: [opts.alpn ?? 'http/1.1'],
      // Verified below, before the socket is handed over, so a refusal can say what the worker presented.
      rejectUnauthorized: false,
      checkServerIdentity,
    });
    socket.setNoDelay(true);
    const timer = setTimeout(() => settle(connectTimeout(), socket), opts.connectTimeoutMs);
    socket.once('secureConnect', () => {
      if (socket.authorized) {
        socket.removeListener('error', onError);
        settle(null, socket);
        return;
      }
      const reason = String(socket.authorizationError ?? 'certificate not verified');
      settle(new UpstreamIdentityError(presentedIdentity(socket.getPeerCertificate()), reason), socket);
    });
    const onError = (err: Error): void => settle(err, socket);
    socket.once('error', onError);
  };
}

export interface UpstreamTls {
  /** HTTP/1.1 connections (ALPN `http/1.1`). */
  readonly connector: buildConnector.connector;
  /** HTTP/2 connections for gRPC (ALPN `h2`). */
  readonly h2Connector: buildConnector.connector;
  close(): void;
}

export interface UpstreamTlsSettings extends UpstreamTlsFiles {
  readonly spiffePrefix: string;
  readonly watchIntervalMs: number;
}

/**
 * Loads the proxy's upstream TLS files (throws a TlsFileError naming the flag and file when one is missing or
 * unusable), watches them, and returns the connectors the pools (HTTP/1.1) and the gRPC sessions (HTTP/2) use. A change that cannot be loaded keeps the
 * credentials in use and is logged.
 */
export function startUpstreamTls(
  settings: UpstreamTlsSettings,
  connectTimeoutMs: number,
  log: Logger,
  counters: { tlsReloads: number; tlsReloadErrors: number },
): UpstreamTls {
  const watched = new WatchedTlsFiles({
    paths: [settings.credentialBundle, settings.trustBundle],
    load: () => loadUpstreamTls(settings),
    intervalMs: settings.watchIntervalMs,
    onReload: (m) => {
      counters.tlsReloads++;
      log.info({ identity: m.identity }, 'upstream TLS credentials reloaded');
    },
    onError: (err) => {
      counters.tlsReloadErrors++;
      log.error({ err: err.message }, 'upstream TLS credentials not reloaded; the previous ones stay in use');
    },
  });
  log.info({ identity: watched.current.identity, spiffePrefix: settings.spiffePrefix }, 'mTLS to the workers');
  const common = { material: () => watched.current, spiffePrefix: settings.spiffePrefix, connectTimeoutMs };
  const connector = createTlsConnector(common);
  const h2Connector = createTlsConnector({ ...common, alpn: 'h2' });
  return { connector, h2Connector, close: () => watched.close() };
}
