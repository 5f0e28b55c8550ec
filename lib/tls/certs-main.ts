/**
 * `actor-edge certs --out DIR`: writes the development CA, every identity the stack uses and the actor identity CA
 * (see dev-certs.ts). `actor-edge certs actor ...` mints one actor certificate (certs-actor-main.ts).
 */
import { defineFlagSet, flagSetHelp, UsageError, type FlagSpecs, type FlagValues } from '../flags.js';
import { configFlag } from '../config-file.js';
import { readComponentConfig } from '../component-config.js';
import { ACTOR_CA_NAME } from './actor-certs.js';
import { main as actorMain } from './certs-actor-main.js';
import { DEV_CONTROL_PLANE_NAMES, DEV_EGRESS_NAMES, DEV_INGRESS_NAMES, DEV_TRUST_DOMAIN, devIdentities, writeDevCertificates, type DevCertOptions } from './dev-certs.js';

export const CERTS_FLAGS = {
  config: configFlag('CERTS_CONFIG', 'certs'),
  out: { type: 'string?', env: 'CERTS_OUT', section: 'output', key: 'dir', help: 'Directory to write into (created if missing; existing files are replaced). Required.' },
  days: { type: 'number', env: 'CERTS_DAYS', default: 30, min: 1, max: 3650, section: 'output', help: 'Validity of the issued certificates.' },
  workers: { type: 'number', env: 'CERTS_WORKERS', default: 4, max: 1024, section: 'identities', help: 'Separate workers to issue certificates for (worker-1.pem …).' },
  'trust-domain': { type: 'string', env: 'CERTS_TRUST_DOMAIN', default: DEV_TRUST_DOMAIN, section: 'identities', help: 'SPIFFE trust domain of the workload identities.' },
  'control-plane-name': {
    type: 'list',
    env: 'CERTS_CONTROL_PLANE_NAMES',
    section: 'identities',
    key: 'controlPlaneNames',
    help: `DNS names of the control plane's server certificate (default ${DEV_CONTROL_PLANE_NAMES.join(',')}).`,
  },
  'ingress-name': {
    type: 'list',
    env: 'CERTS_INGRESS_NAMES',
    section: 'identities',
    key: 'ingressNames',
    help: `DNS names of the proxy's HTTPS serving certificate proxy-ingress.pem, which also carries IP 127.0.0.1 (default ${DEV_INGRESS_NAMES.join(',')}).`,
  },
  'egress-name': {
    type: 'list',
    env: 'CERTS_EGRESS_NAMES',
    section: 'identities',
    key: 'egressNames',
    help: `DNS names of the egress listener's serving certificate proxy-egress.pem, which also carries IP 127.0.0.1 (default ${DEV_EGRESS_NAMES.join(',')}).`,
  },
} as const satisfies FlagSpecs;

export const CERTS_FLAG_SET = defineFlagSet({
  command: 'certs',
  summary:
    'Writes a development CA (ca.pem, ca.key) and credential bundles (certificate + key, one PEM file each): proxy.pem ' +
    '(client identity), extproc.pem (the ext_proc server to the proxy, a client of the control plane), control-plane.pem ' +
    '(server certificate), proxy-ingress.pem (the proxy\'s HTTPS ' +
    'serving certificate), proxy-egress.pem (the egress listener\'s serving certificate), worker.pem (the in-process ' +
    'workers) and worker-N.pem; and a second CA, the actor identity CA (actor-ca.pem, actor-ca.key), which signs ' +
    'actor certificates (`actor-edge certs actor` mints one). Workload certificates carry only a SPIFFE URI SAN. ' +
    'Uses the system openssl. For development only.',
  sections: {
    output: 'Where the files go and how long they are valid.',
    identities: 'The identities and names the certificates carry.',
  },
  flags: CERTS_FLAGS,
});

function buildCertsOptions(values: FlagValues<typeof CERTS_FLAGS>): DevCertOptions & { readonly out: string } {
  if (values.out === undefined) throw new UsageError('--out DIR is required');
  const trustDomain = values['trust-domain'];
  if (!/^[a-z0-9.-]+$/.test(trustDomain)) throw new UsageError(`--trust-domain: "${trustDomain}" is not a trust domain name`);
  const names = (list: readonly string[], fallback: readonly string[]) => (list.length > 0 ? list : fallback);
  return Object.freeze({
    out: values.out,
    workers: values.workers,
    trustDomain,
    controlPlaneNames: names(values['control-plane-name'], DEV_CONTROL_PLANE_NAMES),
    ingressNames: names(values['ingress-name'], DEV_INGRESS_NAMES),
    egressNames: names(values['egress-name'], DEV_EGRESS_NAMES),
    days: values.days,
  });
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'actor') return actorMain(argv.slice(1));
  const read = readComponentConfig(CERTS_FLAG_SET, buildCertsOptions, argv);
  if (read.kind === 'help') {
    process.stdout.write(flagSetHelp(CERTS_FLAG_SET));
    return;
  }
  for (const warning of read.warnings) process.stderr.write(`actor-edge certs: ${warning}\n`);
  const opts = read.config;
  const files = await writeDevCertificates(opts.out, opts);
  const ids = devIdentities(opts.trustDomain);
  const lines = [
    `trust bundle    ${files.ca}`,
    `proxy           ${files.proxy}  (${ids.proxy})`,
    `extproc         ${files.extproc}  (${ids.extproc})`,
    `control plane   ${files.controlPlane}  (DNS ${opts.controlPlaneNames?.join(', ')})`,
    `proxy ingress   ${files.ingress}  (DNS ${opts.ingressNames?.join(', ')}, IP 127.0.0.1)`,
    `proxy egress    ${files.egress}  (DNS ${opts.egressNames?.join(', ')}, IP 127.0.0.1)`,
    `actor CA        ${files.actorCa}, ${ACTOR_CA_NAME}.key  (signs actor certificates: actor-edge certs actor --ca-dir ${opts.out})`,
    `worker          ${files.worker}  (${ids.worker})`,
    ...files.workers.map((f, i) => `worker-${i + 1}`.padEnd(16) + `${f}  (${ids.workerNamed(`worker-${i + 1}`)})`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
