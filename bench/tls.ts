/**
 * The mTLS arms' certificates and flags (A-mtls, C-mtls; A-extproc-mtls for the ext_proc hop alone): development
 * certificates written into a private temporary directory, and the flags that put every hop of an arm's stack on
 * mTLS — the stub's control API and its in-process workers, extproc → control plane, proxy → extproc, proxy →
 * workers. The same identities `npm start` uses.
 */
import { ReloadingTlsCredentials } from '../lib/tls/grpc-client-credentials.js';
import { devIdentities, writeTemporaryDevCertificates, type DevCertFiles, type TemporaryDevCertificates } from '../lib/tls/dev-certs.js';

/** The name the control plane's development certificate carries (the stub listens on 127.0.0.1). */
const CONTROL_PLANE_NAME = 'localhost';

export type BenchCertificates = TemporaryDevCertificates;

export function writeBenchCertificates(): Promise<BenchCertificates> {
  // Two weeks: above the components' default expiry warning (a week).
  return writeTemporaryDevCertificates('actor-edge-bench-certs-', { workers: 0, days: 14 });
}

export function stubTlsArgs(files: DevCertFiles): string[] {
  return [
    '--tls-credential-bundle', files.controlPlane,
    '--tls-client-ca', files.ca,
    '--worker-tls-credential-bundle', files.worker,
    '--worker-tls-client-ca', files.ca,
    '--worker-tls-client-identity', devIdentities().proxy,
  ];
}

/** extproc's side of the ext_proc hop: its listener serves mTLS and accepts only the proxy's identity. */
export function extprocListenTlsArgs(files: DevCertFiles): string[] {
  return ['--tls-credential-bundle', files.extproc, '--tls-client-ca', files.ca];
}

/** The proxy's side of the ext_proc hop: its client certificate, and extproc checked by its SPIFFE ID. */
export function proxyExtprocTlsArgs(files: DevCertFiles): string[] {
  return ['--extproc-credential-bundle', files.proxy, '--extproc-trust-bundle', files.ca];
}

export function extprocTlsArgs(files: DevCertFiles): string[] {
  return ['--apiserver-ca', files.ca, '--apiserver-credential-bundle', files.extproc, '--apiserver-server-name', CONTROL_PLANE_NAME, ...extprocListenTlsArgs(files)];
}

export function proxyTlsArgs(files: DevCertFiles): string[] {
  return ['--upstream-credential-bundle', files.proxy, '--upstream-trust-bundle', files.ca, ...proxyExtprocTlsArgs(files)];
}

/** The bench's own control-plane client credentials (it wakes the actors before an arm; extproc's identity). */
export function controlCredentials(files: DevCertFiles): ReloadingTlsCredentials {
  return new ReloadingTlsCredentials({ caFile: files.ca, credentialBundle: files.extproc, serverName: CONTROL_PLANE_NAME });
}
