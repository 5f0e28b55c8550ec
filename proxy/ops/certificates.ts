/**
 * The certificates a proxy process loads — the HTTPS (and CONNECT-over-TLS) serving certificate, the upstream
 * credential and trust bundles, the ext_proc ones — watched for their expiry (`lib/tls/expiry.ts`): the gauge
 * `proxy_tls_certificate_expiry_seconds` (the `--workers` primary reports the smallest of its workers') and a
 * warning under `--cert-expiry-warning-hours`.
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.js';
import { startCertificateExpiry, type CertificateExpiry, type CertificateSource } from '../../lib/tls/expiry.js';
import type { ProxyConfig } from '../config.js';

export function proxyCertificateSources(config: ProxyConfig): CertificateSource[] {
  return [
    { what: '--tls-cert', file: config.tls?.certFile ?? config.connectTls?.certFile ?? '' },
    { what: '--upstream-credential-bundle', file: config.upstreamTls?.credentialBundle ?? '' },
    { what: '--upstream-trust-bundle', file: config.upstreamTls?.trustBundle ?? '' },
    { what: '--extproc-credential-bundle', file: config.resolver === 'extproc' ? (config.extprocTls?.credentialBundle ?? '') : '' },
    { what: '--extproc-trust-bundle', file: config.resolver === 'extproc' ? (config.extprocTls?.trustBundle ?? '') : '' },
  ];
}

export function startProxyCertificateExpiry(config: ProxyConfig, log: Logger, registry: Registry): CertificateExpiry {
  return startCertificateExpiry('proxy', proxyCertificateSources(config), { warningHours: config.certExpiryWarningHours, log, registry });
}
