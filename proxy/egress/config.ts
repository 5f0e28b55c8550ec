/**
 * The egress listener's slice of the proxy's configuration: its `--egress-*` flags (declared here, composed into the
 * proxy's flags by `proxy/config.ts`) and what they build: where it listens, its serving certificate, the actor
 * identity CA that client certificates must chain to, and the tunnels' limits.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { parseHostPort, type HostPort } from '../../lib/address.js';
import type { TlsFiles } from '../edge/tls-certificate.js';
import { DEFAULT_NEVER_DIAL, ForbiddenDestinations, NeverDialError } from './forbidden-destinations.js';

export interface EgressListenerConfig {
  readonly listen: HostPort;
  /** The serving certificate (reloaded when its files change). */
  readonly tls: TlsFiles;
  /** `--egress-client-ca`: PEM file of the actor identity CA. */
  readonly clientCaFile: string;
  /** 0: no idle limit. */
  readonly tunnelIdleTimeoutMs: number;
  /** 0: no lifetime limit. */
  readonly tunnelMaxLifetimeMs: number;
  readonly maxTunnelsPerActor: number;
  readonly connectTimeoutMs: number;
  readonly extprocTimeoutMs: number;
  /** `--egress-never-dial`: CIDRs never dialled whatever a policy allows (`forbidden-destinations.ts`). */
  readonly neverDial: readonly string[];
  /** A tunnel decided on its traffic: its first bytes must decide within this time (`--egress-sni-timeout-ms`)... */
  readonly sniTimeoutMs: number;
  /** ...and within this many bytes (`--egress-sni-max-bytes`). */
  readonly sniMaxBytes: number;
}

/** The egress listener's flags (`egress` section of the config file). */
export const EGRESS_LISTENER_FLAGS = {
  'egress-listen': {
    type: 'string?',
    env: 'PROXY_EGRESS_LISTEN',
    section: 'egress',
    key: 'listen',
    help: 'When set, the egress listener HOST:PORT: TLS with the actor\'s client certificate (ALPN h2 and http/1.1), CONNECT IP:PORT opens a TCP tunnel when ext_proc allows it; needs --egress-tls-cert, --egress-tls-key and --egress-client-ca.',
  },
  'egress-tls-cert': { type: 'string?', env: 'PROXY_EGRESS_TLS_CERT', section: 'egress', key: 'tlsCert', help: 'PEM certificate chain of the egress listener; reloaded when the file changes.' },
  'egress-tls-key': { type: 'string?', env: 'PROXY_EGRESS_TLS_KEY', section: 'egress', key: 'tlsKey', help: 'PEM private key of the egress listener; reloaded when the file changes.' },
  'egress-client-ca': {
    type: 'string?',
    env: 'PROXY_EGRESS_CLIENT_CA',
    section: 'egress',
    key: 'clientCa',
    help: 'PEM file with the actor identity CA: an actor\'s client certificate must chain to it (required with --egress-listen).',
  },
  'egress-tunnel-idle-timeout-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_TUNNEL_IDLE_TIMEOUT_MS',
    section: 'egress',
    key: 'tunnelIdleTimeoutMs',
    default: 300000,
    min: 0,
    help: 'An egress tunnel that carries no byte either way for this long is closed; 0 disables.',
  },
  'egress-tunnel-max-lifetime-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_TUNNEL_MAX_LIFETIME_MS',
    section: 'egress',
    key: 'tunnelMaxLifetimeMs',
    default: 3600000,
    min: 0,
    help: 'An egress tunnel is closed this long after it opened, busy or not (whatever its re-validations say); 0 disables.',
  },
  'egress-max-tunnels-per-actor': {
    type: 'number',
    env: 'PROXY_EGRESS_MAX_TUNNELS_PER_ACTOR',
    section: 'egress',
    key: 'maxTunnelsPerActor',
    default: 256,
    min: 1,
    help: 'Egress tunnels one actor may have open (or being decided) at once in this process; one more CONNECT is answered 429.',
  },
  'egress-connect-timeout-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_CONNECT_TIMEOUT_MS',
    section: 'egress',
    key: 'connectTimeoutMs',
    default: 5000,
    min: 1,
    help: 'An allowed CONNECT\'s destination must accept the TCP connection within this time (502 destination unreachable otherwise).',
  },
  'egress-extproc-timeout-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_EXTPROC_TIMEOUT_MS',
    section: 'egress',
    key: 'extprocTimeoutMs',
    default: 2000,
    min: 1,
    help: 'ext_proc must answer an egress CONNECT within this time (503 control plane unavailable otherwise, not cached).',
  },
  'egress-never-dial': {
    type: 'string',
    env: 'PROXY_EGRESS_NEVER_DIAL',
    section: 'egress',
    key: 'neverDial',
    default: DEFAULT_NEVER_DIAL.join(','),
    help: 'Comma-separated CIDRs the egress gateway never dials, whatever a policy allows (403 egress denied, before ext_proc); "none" for none. The proxy\'s own listeners are never dialled either.',
  },
  'egress-sni-timeout-ms': {
    type: 'number',
    env: 'PROXY_EGRESS_SNI_TIMEOUT_MS',
    section: 'egress',
    key: 'sniTimeoutMs',
    default: 5000,
    min: 1,
    help: 'A CONNECT that only hostname rules may allow is answered 200, then the actor\'s first bytes (a TLS ClientHello\'s SNI, or a cleartext HTTP/1.1 request\'s Host) must decide it within this time; otherwise the tunnel is closed.',
  },
  'egress-sni-max-bytes': {
    type: 'number',
    env: 'PROXY_EGRESS_SNI_MAX_BYTES',
    section: 'egress',
    key: 'sniMaxBytes',
    default: 16384,
    min: 64,
    max: 1048576,
    help: 'The most bytes of a tunnel decided on its traffic that are read (and held) before its ClientHello or request head must have decided it; otherwise the tunnel is closed.',
  },
} as const satisfies FlagSpecs;

/** The `--egress-*` flag values this slice is built from. */
export type EgressListenerFlags = FlagValues<typeof EGRESS_LISTENER_FLAGS>;

/** `--egress-never-dial`: its CIDRs ("none": none), checked here so a bad one stops the start with its position. */
function neverDialOf(text: string): readonly string[] {
  const list = text.trim() === 'none' ? [] : text.split(',').map((c) => c.trim()).filter((c) => c !== '');
  try {
    new ForbiddenDestinations(list);
  } catch (err) {
    if (err instanceof NeverDialError) throw new UsageError(err.message);
    throw err;
  }
  return Object.freeze(list);
}

/** Undefined without `--egress-listen`; a UsageError when a file it needs is not named. */
export function buildEgressListenerConfig(flags: EgressListenerFlags): EgressListenerConfig | undefined {
  const listen = flags['egress-listen'];
  const certFile = flags['egress-tls-cert'];
  const keyFile = flags['egress-tls-key'];
  const clientCaFile = flags['egress-client-ca'];
  if (listen === undefined) {
    const named = [['--egress-tls-cert', certFile], ['--egress-tls-key', keyFile], ['--egress-client-ca', clientCaFile]].filter(([, v]) => v !== undefined);
    if (named.length > 0) throw new UsageError(`${named.map(([f]) => f).join(', ')} need${named.length === 1 ? 's' : ''} --egress-listen`);
    return undefined;
  }
  if (clientCaFile === undefined) {
    throw new UsageError('--egress-listen needs --egress-client-ca: the actor identity CA (PEM) that every actor\'s client certificate must chain to');
  }
  if (certFile === undefined || keyFile === undefined) throw new UsageError('--egress-listen needs --egress-tls-cert and --egress-tls-key (its serving certificate)');
  return Object.freeze({
    listen: parseHostPort(listen, '--egress-listen'),
    tls: Object.freeze({ certFile, keyFile, flags: Object.freeze({ cert: '--egress-tls-cert', key: '--egress-tls-key' }) }),
    clientCaFile,
    tunnelIdleTimeoutMs: flags['egress-tunnel-idle-timeout-ms'],
    tunnelMaxLifetimeMs: flags['egress-tunnel-max-lifetime-ms'],
    maxTunnelsPerActor: flags['egress-max-tunnels-per-actor'],
    connectTimeoutMs: flags['egress-connect-timeout-ms'],
    extprocTimeoutMs: flags['egress-extproc-timeout-ms'],
    neverDial: neverDialOf(flags['egress-never-dial']),
    sniTimeoutMs: flags['egress-sni-timeout-ms'],
    sniMaxBytes: flags['egress-sni-max-bytes'],
  });
}

/** Reads `--egress-client-ca`: at least one CA certificate (PEM); a UsageError naming the file otherwise. */
export function loadClientCa(file: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new UsageError(`--egress-client-ca ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new UsageError(`--egress-client-ca ${file}: no PEM certificate in it`);
  for (const block of blocks) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (err) {
      throw new UsageError(`--egress-client-ca ${file}: not a certificate (${(err as Error).message})`);
    }
    if (!cert.ca) throw new UsageError(`--egress-client-ca ${file}: "${cert.subject}" is not a CA certificate`);
  }
  return pem;
}
