/**
 * The proxy's start-up checks of its files, shared by `actor-edge proxy` (before any listener) and `actor-edge
 * validate`: the HTTPS and CONNECT-over-TLS serving certificate, the egress listener's serving certificate and
 * actor identity CA, and the mTLS bundles for the workers. A missing or
 * unusable file is a UsageError naming the flag, the file and the reason.
 */
import { TlsFileError } from '../lib/tls/files.js';
import { UsageError } from '../lib/flags.js';
import type { ProxyConfig } from './config.js';
import { loadCertificate } from './edge/tls-certificate.js';
import { loadUpstreamTls } from './upstream/tls.js';
import { loadExtProcTls } from './stages/ext-proc/channel-tls.js';
import { loadClientCa } from './egress/config.js';

/** What was checked: the files and what they hold, e.g. the proxy's own identity. */
export interface CheckedFiles {
  /** The serving certificate's files, when a TLS listener is configured. */
  readonly servingCertificate: { readonly certFile: string; readonly keyFile: string } | undefined;
  /** The proxy's URI SANs from its credential bundle, when mTLS to the workers is on. */
  readonly upstreamIdentity: readonly string[] | undefined;
  /** Whether the ext_proc hop's mTLS bundles were read (mTLS to ext_proc on, and ext_proc the resolver). */
  readonly extProcTls: boolean;
}

export function checkProxyFiles(
  config: Pick<ProxyConfig, 'listeners' | 'upstream' | 'extProc' | 'resolver'> & Partial<Pick<ProxyConfig, 'egressListener'>>,
  opts: { readonly upstream?: boolean } = {},
): CheckedFiles {
  const serving = config.listeners.tls ?? config.listeners.connectTls;
  if (serving !== undefined) loadCertificate(serving);
  const egress = config.egressListener;
  if (egress !== undefined) {
    loadCertificate(egress.tls);
    loadClientCa(egress.clientCaFile);
  }
  let upstreamIdentity: readonly string[] | undefined;
  if (config.upstream.tls !== undefined && opts.upstream !== false) {
    try {
      upstreamIdentity = loadUpstreamTls(config.upstream.tls).identity;
    } catch (err) {
      if (err instanceof TlsFileError) throw new UsageError(err.message);
      throw err;
    }
  }
  const extProcTls = config.extProc.tls !== undefined && config.resolver.kind === 'extproc' && opts.upstream !== false;
  if (extProcTls && config.extProc.tls !== undefined) loadExtProcTls(config.extProc.tls);
  return { servingCertificate: serving, upstreamIdentity, extProcTls };
}
