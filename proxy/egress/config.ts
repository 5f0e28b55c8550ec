/**
 * The egress listener's configuration (`--egress-*` flags of `proxy/config.ts`): where it listens, its serving
 * certificate, the actor identity CA that client certificates must chain to, and the tunnels' limits.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { UsageError } from '../../lib/flags.js';
import { parseHostPort, type HostPort } from '../../lib/address.js';
import type { TlsFiles } from '../edge/tls-certificate.js';
import { ForbiddenDestinations, NeverDialError } from './forbidden-destinations.js';

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
}

/** The `--egress-*` flag values this slice is built from. */
export interface EgressListenerFlags {
  readonly 'egress-listen': string | undefined;
  readonly 'egress-tls-cert': string | undefined;
  readonly 'egress-tls-key': string | undefined;
  readonly 'egress-client-ca': string | undefined;
  readonly 'egress-tunnel-idle-timeout-ms': number;
  readonly 'egress-tunnel-max-lifetime-ms': number;
  readonly 'egress-max-tunnels-per-actor': number;
  readonly 'egress-connect-timeout-ms': number;
  readonly 'egress-extproc-timeout-ms': number;
  readonly 'egress-never-dial': string;
}

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
