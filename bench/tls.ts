/**
 * The mTLS arms' certificates (A-mtls, C-mtls; A-extproc-mtls for the ext_proc hop alone): development
 * certificates written into a private temporary directory. The flags that put every hop of an arm's stack on mTLS
 * are the stack plan's (`scripts/stack/wiring.ts`), the same `npm start` and the tests use.
 */
import { ReloadingTlsCredentials } from '../lib/tls/grpc-client-credentials.js';
import { writeTemporaryDevCertificates, type TemporaryDevCertificates } from '../lib/tls/dev-certs.js';
import { CONTROL_PLANE_NAME } from '../scripts/stack/wiring.js';

export type BenchCertificates = TemporaryDevCertificates;

export function writeBenchCertificates(): Promise<BenchCertificates> {
  // Two weeks: above the components' default expiry warning (a week).
  return writeTemporaryDevCertificates('actor-edge-bench-certs-', { workers: 0, days: 14 });
}

/** The bench's own control-plane client credentials (it wakes the actors before an arm; extproc's identity). */
export function controlCredentials(files: TemporaryDevCertificates['files']): ReloadingTlsCredentials {
  return new ReloadingTlsCredentials({ caFile: files.ca, credentialBundle: files.extproc, serverName: CONTROL_PLANE_NAME });
}
