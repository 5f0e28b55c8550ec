/** `actor-edge certs --out DIR`: writes the development CA and every identity the stack uses (see dev-certs.ts). */
import { formatHelp, readFlags, UsageError, type FlagSpecs } from '../flags.js';
import { DEV_CONTROL_PLANE_NAMES, DEV_TRUST_DOMAIN, devIdentities, writeDevCertificates } from './dev-certs.js';

export const CERTS_FLAGS = {
  out: { type: 'string?', env: 'CERTS_OUT', help: 'Directory to write into (created if missing; existing files are replaced). Required.' },
  workers: { type: 'number', env: 'CERTS_WORKERS', default: 4, max: 1024, help: 'Separate workers to issue certificates for (worker-1.pem …).' },
  'trust-domain': { type: 'string', env: 'CERTS_TRUST_DOMAIN', default: DEV_TRUST_DOMAIN, help: 'SPIFFE trust domain of the workload identities.' },
  'control-plane-name': {
    type: 'list',
    env: 'CERTS_CONTROL_PLANE_NAMES',
    help: `DNS names of the control plane's server certificate (default ${DEV_CONTROL_PLANE_NAMES.join(',')}).`,
  },
  days: { type: 'number', env: 'CERTS_DAYS', default: 30, min: 1, max: 3650, help: 'Validity of the issued certificates.' },
} as const satisfies FlagSpecs;

const SUMMARY =
  'Writes a development CA (ca.pem, ca.key) and credential bundles (certificate + key, one PEM file each): proxy.pem ' +
  '(client identity), extproc.pem (the ext_proc server to the proxy, a client of the control plane), control-plane.pem ' +
  '(server certificate), worker.pem (the in-process workers) and worker-N.pem. Workload certificates carry only a ' +
  'SPIFFE URI SAN. Uses the system openssl. For development only.';

export async function main(argv: string[]): Promise<void> {
  const { help, values } = readFlags(CERTS_FLAGS, argv);
  if (help) {
    process.stdout.write(formatHelp('certs', SUMMARY, CERTS_FLAGS));
    return;
  }
  if (values.out === undefined) throw new UsageError('--out DIR is required');
  const trustDomain = values['trust-domain'];
  if (!/^[a-z0-9.-]+$/.test(trustDomain)) throw new UsageError(`--trust-domain: "${trustDomain}" is not a trust domain name`);
  const names = values['control-plane-name'].length > 0 ? values['control-plane-name'] : DEV_CONTROL_PLANE_NAMES;
  const files = await writeDevCertificates(values.out, { workers: values.workers, trustDomain, controlPlaneNames: names, days: values.days });
  const ids = devIdentities(trustDomain);
  const lines = [
    `trust bundle    ${files.ca}`,
    `proxy           ${files.proxy}  (${ids.proxy})`,
    `extproc         ${files.extproc}  (${ids.extproc})`,
    `control plane   ${files.controlPlane}  (DNS ${names.join(', ')})`,
    `worker          ${files.worker}  (${ids.worker})`,
    ...files.workers.map((f, i) => `worker-${i + 1}`.padEnd(16) + `${f}  (${ids.workerNamed(`worker-${i + 1}`)})`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
