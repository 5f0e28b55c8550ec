/**
 * mTLS for `npm start`: development certificates generated at start into a private temporary directory (removed
 * when the stack stops), handed to every component through its own environment variables: proxy → workers,
 * proxy → extproc (the ext_proc hop), extproc → control plane. `--tls off` (or STACK_TLS=off) runs every hop in
 * plaintext, and the launcher warns about it before it starts anything. A variable the user set wins over the
 * generated one.
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
    EXTPROC_TLS_CREDENTIAL_BUNDLE: files.extproc,
    EXTPROC_TLS_CLIENT_CA: files.ca,
    EXTPROC_TLS_CLIENT_SPIFFE_ID: ids.proxy,
    PROXY_UPSTREAM_CREDENTIAL_BUNDLE: files.proxy,
    PROXY_UPSTREAM_TRUST_BUNDLE: files.ca,
    PROXY_EXTPROC_CREDENTIAL_BUNDLE: files.proxy,
    PROXY_EXTPROC_TRUST_BUNDLE: files.ca,
    PROXY_EXTPROC_SPIFFE_ID: ids.extproc,
  };
}

/** What the launcher says first when the stack runs without TLS. */
export const PLAINTEXT_WARNING =
  'WARN  --tls off: every internal hop is plaintext; the ext_proc hop carries the request headers of every miss unencrypted and unauthenticated';

export interface StackCertificates {
  readonly env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

export async function generateStackCertificates(): Promise<StackCertificates> {
  // Valid for two weeks: above every component's default expiry warning (a week), so a fresh stack does not warn.
  const certs = await writeTemporaryDevCertificates('actor-edge-certs-', { workers: 0, days: 14 });
  return { env: stackTlsEnv(certs.files), remove: certs.remove };
}
