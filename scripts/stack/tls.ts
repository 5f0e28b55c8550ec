/**
 * mTLS for `npm start`: development certificates generated at start into a private temporary directory (removed
 * when the stack stops), handed to every component through its own environment variables: proxy → workers,
 * proxy → extproc (the ext_proc hop), extproc → control plane. `--tls off` (or STACK_TLS=off; `flags.ts`) runs every hop in
 * plaintext, and the launcher warns about it before it starts anything. A variable the user set wins over the
 * generated one.
 */
import { writeTemporaryDevCertificates, type DevCertFiles } from '../../lib/tls/dev-certs.js';
import { tlsEnv } from './wiring.js';

/** The environment that puts every hop of the local stack on mTLS with `files` (the plan's, as variables). */
export function stackTlsEnv(files: DevCertFiles): NodeJS.ProcessEnv {
  return { ...tlsEnv('apiserver-stub', files), ...tlsEnv('extproc', files), ...tlsEnv('proxy', files) };
}

/** What the launcher says first when the stack runs without TLS. */
export const PLAINTEXT_WARNING =
  'WARN  --tls off: every internal hop is plaintext; the ext_proc hop carries the request headers of every miss unencrypted and unauthenticated';

export interface StackCertificates {
  readonly env: NodeJS.ProcessEnv;
  readonly files: DevCertFiles;
  remove(): Promise<void>;
}

export async function generateStackCertificates(): Promise<StackCertificates> {
  // Valid for two weeks: above every component's default expiry warning (a week), so a fresh stack does not warn.
  const certs = await writeTemporaryDevCertificates('actor-edge-certs-', { workers: 0, days: 14 });
  return { env: stackTlsEnv(certs.files), files: certs.files, remove: certs.remove };
}
