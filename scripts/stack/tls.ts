/**
 * mTLS for `npm start`: development certificates generated at start into a private temporary directory (removed
 * when the stack stops), handed to every component through its own environment variables. `--tls off` (or
 * STACK_TLS=off) runs every hop in plaintext. A variable the user set wins over the generated one.
 */
import { devIdentities, writeTemporaryDevCertificates, type DevCertFiles } from '../../lib/tls/dev-certs.js';

/** Reads `--tls on|off` from argv, else STACK_TLS (default on); undefined for anything else. */
export function tlsSwitch(argv: readonly string[], env: NodeJS.ProcessEnv): 'on' | 'off' | undefined {
  const i = argv.indexOf('--tls');
  const raw = (i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--tls='))?.slice(6)) ?? env.STACK_TLS ?? 'on';
  const v = raw.trim().toLowerCase();
  return v === 'on' || v === 'off' ? v : undefined;
}

/** The environment that puts every hop of the local stack on mTLS with `files`. */
export function stackTlsEnv(files: DevCertFiles): NodeJS.ProcessEnv {
  const ids = devIdentities();
  return {
    APISERVER_TLS_CREDENTIAL_BUNDLE: files.controlPlane,
    APISERVER_TLS_CLIENT_CA: files.ca,
    WORKER_TLS_CREDENTIAL_BUNDLE: files.worker,
    WORKER_TLS_CLIENT_CA: files.ca,
    WORKER_TLS_CLIENT_IDENTITY: ids.proxy,
    EXTPROC_APISERVER_CA: files.ca,
    EXTPROC_APISERVER_CREDENTIAL_BUNDLE: files.extproc,
    EXTPROC_APISERVER_SERVER_NAME: 'localhost',
    PROXY_UPSTREAM_CREDENTIAL_BUNDLE: files.proxy,
    PROXY_UPSTREAM_TRUST_BUNDLE: files.ca,
  };
}

export interface StackCertificates {
  readonly env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

export async function generateStackCertificates(): Promise<StackCertificates> {
  const certs = await writeTemporaryDevCertificates('actor-edge-certs-', { workers: 0, days: 2 });
  return { env: stackTlsEnv(certs.files), remove: certs.remove };
}
