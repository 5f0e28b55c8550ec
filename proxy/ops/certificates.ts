/**
 * The certificates a proxy process loads — the HTTPS (and CONNECT-over-TLS) serving certificate, the upstream
 * credential and trust bundles, the ext_proc ones — watched for their expiry (`lib/tls/expiry.ts`): the gauge
 * `actor_edge_proxy_tls_certificate_expiry_seconds` (the `--workers` primary reports the smallest of its workers') and a
 * warning under `--cert-expiry-warning-hours`.
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.js';
import { startCertificateExpiry, type CertificateExpiry, type CertificateSource } from '../../lib/tls/expiry.js';

/** A hop's mTLS files. */
interface BundleFiles {
  readonly credentialBundle: string;
  readonly trustBundle: string;
}

/** The files of the certificates a proxy process loads; each undefined when that listener or hop has no TLS. */
export interface ProxyCertificateFiles {
  /** `--tls-cert` (the HTTPS and the TLS CONNECT listeners). */
  readonly servingCert: string | undefined;
  readonly upstream: BundleFiles | undefined;
  /** Only when ext_proc is the resolver. */
  readonly extProc: BundleFiles | undefined;
}

export function proxyCertificateSources(files: ProxyCertificateFiles): CertificateSource[] {
  return [
    { what: '--tls-cert', file: files.servingCert ?? '' },
    { what: '--upstream-credential-bundle', file: files.upstream?.credentialBundle ?? '' },
    { what: '--upstream-trust-bundle', file: files.upstream?.trustBundle ?? '' },
    { what: '--extproc-credential-bundle', file: files.extProc?.credentialBundle ?? '' },
    { what: '--extproc-trust-bundle', file: files.extProc?.trustBundle ?? '' },
  ];
}

/** `warningHours`: `--cert-expiry-warning-hours` (0: no warning). */
export function startProxyCertificateExpiry(files: ProxyCertificateFiles, warningHours: number, log: Logger, registry: Registry): CertificateExpiry {
  return startCertificateExpiry('proxy', proxyCertificateSources(files), { warningHours, log, registry });
}
