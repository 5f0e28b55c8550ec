/**
 * `actor-edge validate apiserver-stub|worker --config FILE [flags]`: the flags, variables and config file, and the
 * TLS files read as at start, without listening or attaching.
 */
import { formatHostPort, type HostPort } from '../lib/address.js';
import { UsageError } from '../lib/flags.js';
import { throwEveryProblem } from '../lib/config-problems.js';
import type { TlsFileCheck } from '../lib/tls/files.js';
import type { ValidConfig } from '../lib/validation.js';
import { readStubConfig } from './config.js';
import type { EgressSeed } from './egress-seed.js';
import { actorCaFiles } from '../lib/tls/actor-certs.js';
import { readWorkerConfig } from './worker/config.js';
import type { WorkerTlsSettings } from './worker/tls.js';

const at = (a: HostPort): string => formatHostPort(a.host, a.port);


function workerTlsFiles(tls: WorkerTlsSettings | undefined, prefix: string): TlsFileCheck[] {
  if (tls === undefined) return [];
  return [
    { kind: 'credential-bundle', path: tls.credentialBundle, what: `--${prefix}tls-credential-bundle` },
    { kind: 'trust-bundle', path: tls.clientCa, what: `--${prefix}tls-client-ca` },
  ];
}

function workerTlsText(tls: WorkerTlsSettings | undefined): string {
  return tls === undefined ? 'plain HTTP' : `mTLS, accepting only ${tls.clientIdentity}`;
}

function egressSeedText(seed: EgressSeed): string {
  const own = seed.byName.size === 0 ? [] : [`${seed.byName.size} seeded actor(s) with their own`];
  const others = seed.others === undefined ? [] : [`${own.length === 0 ? 'every' : 'every other'} seeded actor with the "*" one`];
  const parts = [...own, ...others];
  return parts.length === 0 ? 'none (the seeded actors reach nothing)' : parts.join(', ');
}

export async function validateStub(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ValidConfig> {
  const problems: string[] = [];
  const read = readStubConfig(argv, env, { problems });
  if (read.kind === 'help') throw new UsageError('validate takes apiserver-stub\'s flags; see actor-edge apiserver-stub --help');
  const c = read.config;
  throwEveryProblem(problems, read.sources, [
    ...(c.tls === undefined
      ? []
      : [
          { kind: 'credential-bundle', path: c.tls.credentialBundle, what: '--tls-credential-bundle' } as const,
          { kind: 'trust-bundle', path: c.tls.clientCa, what: '--tls-client-ca' } as const,
        ]),
    ...workerTlsFiles(c.workerTls, 'worker-'),
    ...(c.actorCaDir === undefined ? [] : [{ kind: 'trust-bundle', path: actorCaFiles(c.actorCaDir).certFile, what: '--actor-ca-dir' } as const]),
  ]);
  return {
    component: 'apiserver-stub',
    file: read.file,
    warnings: read.warnings,
    plan: [
      ['control plane', `${at(c.listen)} (ateapi.Control${c.tls === undefined ? ', plaintext' : ', TLS with client certificates'})`],
      ['attach', c.attachListen === undefined ? `on ${at(c.listen)}` : at(c.attachListen)],
      ['admin', at(c.admin)],
      ['workers', `${c.workers} in-process from ${c.workerIpBase}:${c.workerPort}, ${c.workerCapacity} actor(s) each, ${workerTlsText(c.workerTls)}`],
      ['actors', `${c.actors} in atespace ${c.atespace} under ${c.actorSuffix}, all SUSPENDED`],
      ['egress policies', egressSeedText(c.egressSeed)],
      ['actor certificates', c.actorCaDir === undefined ? 'none (no --actor-ca-dir)' : `minted by the actor identity CA in ${c.actorCaDir}`],
    ],
    config: c,
  };
}

export async function validateWorker(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ValidConfig> {
  const problems: string[] = [];
  const read = readWorkerConfig(argv, env, { problems });
  if (read.kind === 'help') throw new UsageError('validate takes the worker\'s flags; see actor-edge worker --help');
  const c = read.config;
  throwEveryProblem(problems, read.sources, workerTlsFiles(c.tls, ''));
  return {
    component: 'worker',
    file: read.file,
    warnings: read.warnings,
    plan: [
      ['attach to', c.apiserver],
      ['http', `${c.listenIp}:${c.port} advertised as ${c.advertiseIp}, ${c.capacity} actor(s), ${workerTlsText(c.tls)}`],
    ],
    config: c,
  };
}
