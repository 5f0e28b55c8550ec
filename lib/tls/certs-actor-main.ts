/**
 * `actor-edge certs actor --ca-dir DIR --atespace A --name N --out FILE`: mints one actor certificate with the actor
 * identity CA that `actor-edge certs` wrote (actor-certs.ts) and writes it as a credential bundle.
 */
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { isResourceName } from '../actor-ref.js';
import { actorUri } from '../egress/actor-certificate.js';
import { readComponentConfig } from '../component-config.js';
import { defineFlagSet, flagSetHelp, UsageError, type FlagSpecs, type FlagValues } from '../flags.js';
import { ACTOR_CA_NAME, DEFAULT_ACTOR_CERT_LIFETIME_MS, mintActorCertificate, requireActorCa } from './actor-certs.js';

export const CERTS_ACTOR_FLAGS = {
  'ca-dir': {
    type: 'string?',
    env: 'CERTS_ACTOR_CA_DIR',
    noFile: true,
    help: `Directory holding the actor identity CA (${ACTOR_CA_NAME}.pem, ${ACTOR_CA_NAME}.key), as \`actor-edge certs\` writes it. Required.`,
  },
  atespace: { type: 'string?', env: 'CERTS_ACTOR_ATESPACE', noFile: true, help: "The actor's atespace (a DNS-1123 label). Required." },
  name: { type: 'string?', env: 'CERTS_ACTOR_NAME', noFile: true, help: "The actor's name (a DNS-1123 label). Required." },
  'lifetime-s': {
    type: 'number',
    env: 'CERTS_ACTOR_LIFETIME_S',
    default: DEFAULT_ACTOR_CERT_LIFETIME_MS / 1000,
    min: 1,
    max: 366 * 24 * 3600,
    noFile: true,
    help: 'Seconds the certificate is valid from now (it is valid from 5 minutes back).',
  },
  out: { type: 'string?', env: 'CERTS_ACTOR_OUT', noFile: true, help: 'File to write the certificate and its key to (one PEM file, mode 0600; replaced if it exists). Required.' },
} as const satisfies FlagSpecs;

export const CERTS_ACTOR_FLAG_SET = defineFlagSet({
  command: 'certs actor',
  summary:
    'Mints one actor certificate, as the platform does per activation: a fresh EC P-256 key, EKU ClientAuth + ServerAuth ' +
    'and one URI SAN, spiffe://substrate-actor.local/ateom-for-actor/<atespace>/<name>, signed by the actor identity CA ' +
    'in --ca-dir. Needs no openssl (it signs in-process). For development only.',
  sections: {},
  flags: CERTS_ACTOR_FLAGS,
});

export interface CertsActorOptions {
  readonly caDir: string;
  readonly atespace: string;
  readonly name: string;
  readonly lifetimeMs: number;
  readonly out: string;
}

function required(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} ${what} is required`);
  return value;
}

function buildCertsActorOptions(values: FlagValues<typeof CERTS_ACTOR_FLAGS>): CertsActorOptions {
  const caDir = required(values['ca-dir'], 'ca-dir', 'DIR');
  const atespace = required(values.atespace, 'atespace', 'ATESPACE');
  const name = required(values.name, 'name', 'NAME');
  const out = required(values.out, 'out', 'FILE');
  if (!isResourceName(atespace)) throw new UsageError(`--atespace: "${atespace}" is not a DNS-1123 label (a-z, 0-9 and -, at most 63)`);
  if (!isResourceName(name)) throw new UsageError(`--name: "${name}" is not a DNS-1123 label (a-z, 0-9 and -, at most 63)`);
  return Object.freeze({ caDir, atespace, name, lifetimeMs: values['lifetime-s'] * 1000, out });
}

export async function main(argv: string[]): Promise<void> {
  const read = readComponentConfig(CERTS_ACTOR_FLAG_SET, buildCertsActorOptions, argv);
  if (read.kind === 'help') {
    process.stdout.write(flagSetHelp(CERTS_ACTOR_FLAG_SET));
    return;
  }
  for (const warning of read.warnings) process.stderr.write(`actor-edge certs actor: ${warning}\n`);
  const opts = read.config;
  await requireActorCa(opts.caDir).catch((err: unknown) => {
    throw new UsageError(`--ca-dir: ${(err as Error).message}`);
  });
  const minted = await mintActorCertificate(opts.caDir, opts);
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, minted.bundle, { mode: 0o600 });
  await chmod(opts.out, 0o600);
  process.stdout.write(`actor certificate  ${opts.out}  (${actorUri(opts)}, valid until ${new Date(minted.notAfterMs).toISOString()})\n`);
}
