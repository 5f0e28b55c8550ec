/**
 * The listeners' slice of the proxy's config (the `listeners` section): where the proxy listens for clients — plain
 * HTTP, HTTPS, and the CONNECT listeners — and the serving certificate's files, with their flags, composed into the
 * proxy's flags by `proxy/config.ts`.
 */
import { UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { parseHostPort, type HostPort } from '../../lib/address.js';

/** The HTTPS listener: where, and the PEM files of its serving certificate. */
export interface TlsListenConfig {
  readonly listen: HostPort;
  readonly certFile: string;
  readonly keyFile: string;
}

/** Where the proxy listens for clients. */
export interface ListenersConfig {
  readonly listen: HostPort;
  /** Undefined without `--tls-listen`. */
  readonly tls: TlsListenConfig | undefined;
  /** `--connect-listen`, when set. */
  readonly connect: HostPort | undefined;
  /** `--connect-tls-listen` with the serving certificate's files, when set. */
  readonly connectTls: TlsListenConfig | undefined;
}

/** The HTTP and HTTPS listeners, and the serving certificate's files. */
export const LISTENER_FLAGS = {
  listen: { type: 'string', env: 'PROXY_LISTEN', section: 'listeners', key: 'http', default: '127.0.0.1:8080', help: 'Ingress HTTP listener HOST:PORT.' },
  'tls-listen': { type: 'string?', env: 'PROXY_TLS_LISTEN', section: 'listeners', key: 'https', help: 'HTTPS listener HOST:PORT (ALPN h2 and http/1.1, TLS 1.2 at least); needs --tls-cert and --tls-key.' },
  'tls-cert': { type: 'string?', env: 'PROXY_TLS_CERT', section: 'listeners', key: 'tlsCert', help: 'PEM certificate chain of the HTTPS listener; reloaded when the file changes.' },
  'tls-key': { type: 'string?', env: 'PROXY_TLS_KEY', section: 'listeners', key: 'tlsKey', help: 'PEM private key of the HTTPS listener; reloaded when the file changes.' },
} as const satisfies FlagSpecs;

/** The CONNECT listeners (a tunnel into the ingress), plain and over TLS. */
export const CONNECT_LISTENER_FLAGS = {
  'connect-listen': { type: 'string?', env: 'PROXY_CONNECT_LISTEN', section: 'listeners', key: 'connect', help: 'When set, a CONNECT listener HOST:PORT: CONNECT <actor host>:<port> opens a tunnel into the ingress.' },
  'connect-tls-listen': {
    type: 'string?',
    env: 'PROXY_CONNECT_TLS_LISTEN',
    section: 'listeners',
    key: 'connectTls',
    help: 'When set, a CONNECT listener over TLS (an HTTPS proxy) HOST:PORT, serving --tls-cert and --tls-key (needs both).',
  },
} as const satisfies FlagSpecs;

type ListenerFlags = FlagValues<typeof LISTENER_FLAGS & typeof CONNECT_LISTENER_FLAGS>;

/** The listeners' slice from its flag values. */
export function buildListenersConfig(flags: ListenerFlags): ListenersConfig {
  return Object.freeze({
    listen: parseHostPort(flags.listen, '--listen'),
    tls: buildTlsConfig(flags),
    connect: flags['connect-listen'] === undefined ? undefined : parseHostPort(flags['connect-listen'], '--connect-listen'),
    connectTls: buildConnectTlsConfig(flags),
  });
}

function buildTlsConfig(flags: ListenerFlags): TlsListenConfig | undefined {
  const listen = flags['tls-listen'];
  const certFile = flags['tls-cert'];
  const keyFile = flags['tls-key'];
  if (listen === undefined) {
    const used = certFile !== undefined || keyFile !== undefined;
    if (used && flags['connect-tls-listen'] === undefined) throw new UsageError('--tls-cert and --tls-key need --tls-listen or --connect-tls-listen');
    return undefined;
  }
  if (certFile === undefined || keyFile === undefined) throw new UsageError('--tls-listen needs --tls-cert and --tls-key');
  return Object.freeze({ listen: parseHostPort(listen, '--tls-listen'), certFile, keyFile });
}

function buildConnectTlsConfig(flags: ListenerFlags): TlsListenConfig | undefined {
  const listen = flags['connect-tls-listen'];
  if (listen === undefined) return undefined;
  const certFile = flags['tls-cert'];
  const keyFile = flags['tls-key'];
  if (certFile === undefined || keyFile === undefined) throw new UsageError('--connect-tls-listen needs --tls-cert and --tls-key (its serving certificate)');
  return Object.freeze({ listen: parseHostPort(listen, '--connect-tls-listen'), certFile, keyFile });
}
