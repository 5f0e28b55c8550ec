/**
 * `actor-edge validate extproc --config FILE [flags]`: extproc's flags, variables and config file, and the
 * control-plane TLS files read as at start, without listening or dialling the control plane.
 */
import { formatHostPort } from '../lib/address.js';
import { UsageError } from '../lib/flags.js';
import { throwEveryProblem } from '../lib/config-problems.js';
import type { TlsFileCheck } from '../lib/tls/files.js';
import type { ValidConfig } from '../lib/validation.js';
import { readExtprocConfig } from './config.js';

export async function validateExtproc(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ValidConfig> {
  // Every problem in one run: bad values, then every TLS file missing or unreadable.
  const problems: string[] = [];
  const read = readExtprocConfig(argv, env, { problems });
  if (read.kind === 'help') throw new UsageError('validate takes extproc\'s flags; see actor-edge extproc --help');
  const c = read.config;
  const tls = c.apiserverTls;
  const files: TlsFileCheck[] =
    tls === undefined
      ? []
      : [
          { kind: 'trust-bundle', path: tls.caFile, what: '--apiserver-ca' },
          { kind: 'credential-bundle', path: tls.credentialBundle, what: '--apiserver-credential-bundle' },
        ];
  throwEveryProblem(problems, read.sources, files);
  return {
    component: 'extproc',
    file: read.file,
    warnings: read.warnings,
    plan: [
      ['grpc', `${formatHostPort(c.listen.host, c.listen.port)} (envoy.service.ext_proc.v3.ExternalProcessor)`],
      ['admin', `${formatHostPort(c.admin.host, c.admin.port)}${c.adminToken === undefined ? '' : ' (admin token set)'}`],
      ['control plane', `${c.apiserver} ${tls === undefined ? '(plaintext)' : `(TLS 1.3 with a client certificate, server name ${tls.serverName})`}`],
      ['resume', `budget ${c.resumeBudgetMs} ms, at most ${c.parkedMax} requests waiting on retrying resumes; parking ${c.parking === undefined ? 'off' : `on (${c.parking.budgetMs} ms)`}`],
      ['routing', `*.<atespace>.${c.actorSuffix} → <worker>:${c.workerPort}`],
    ],
    config: c,
  };
}
