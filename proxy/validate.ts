/**
 * `actor-edge validate [proxy] --config FILE [flags]`: everything `actor-edge proxy` checks before it starts, and
 * nothing more — every flag, variable and config file field, each user filter module loaded and its factory run
 * (as at start), the serving certificate and the mTLS bundles read — without binding a listener or dialling
 * anything. Returns what it would run; throws a UsageError naming the field or file.
 */
import { formatHostPort, type HostPort } from '../lib/address.js';
import { UsageError } from '../lib/flags.js';
import { ConfigProblems, missingFiles, withoutFile } from '../lib/config-problems.js';
import { createStderrLogger } from '../lib/logger.js';
import type { ValidConfig } from '../lib/validation.js';
import { readProxyConfig, type ProxyConfig } from './config.js';
import { loadUserFilters } from './chain/load-filters.js';
import { checkProxyFiles, type CheckedFiles } from './startup-checks.js';

const at = (a: HostPort): string => formatHostPort(a.host, a.port);

function listeners({ listeners: l, ops }: ProxyConfig, files: CheckedFiles): [string, string][] {
  const cert = files.servingCertificate === undefined ? '' : ` (certificate ${files.servingCertificate.certFile}, key ${files.servingCertificate.keyFile}; reloaded when they change)`;
  return [
    ['http', `${at(l.listen)} (HTTP/1.1 and h2c)`],
    ...(l.tls === undefined ? [] : [['https', `${at(l.tls.listen)} (ALPN h2, http/1.1)${cert}`] as [string, string]]),
    ...(l.connect === undefined ? [] : [['connect', `${at(l.connect)} (CONNECT tunnels into the ingress)`] as [string, string]]),
    ...(l.connectTls === undefined ? [] : [['connect-tls', `${at(l.connectTls.listen)} (CONNECT over TLS)${l.tls === undefined ? cert : ''}`] as [string, string]]),
    ['admin', `${at(ops.admin)} (${ops.adminToken === undefined ? 'no admin token: state-changing calls are not authenticated' : 'state-changing calls need the admin token'})`],
  ];
}

function chain(c: ProxyConfig, filterNames: readonly string[]): string {
  const cache = c.cache.enabled ? `actor-cache (TTL ${c.cache.ttlMs} ms, ${c.cache.maxEntries} entries)` : 'no cache (ext_proc on every request)';
  const resolver = c.resolver.kind === 'apiserver' ? `apiserver resolver ${at(c.resolver.apiserver)} (benchmark only)` : `ext-proc ${at(c.extProc.address)}`;
  return [...filterNames, cache, resolver, 'router'].join(' → ');
}

/** The files the config names, by the flag that names them (only those in use). */
function filesInUse(c: ProxyConfig): Record<string, string | undefined> {
  const serving = c.listeners.tls ?? c.listeners.connectTls;
  const extProc = c.resolver.kind === 'extproc' ? c.extProc.tls : undefined;
  return {
    'tls-cert': serving?.certFile,
    'tls-key': serving?.keyFile,
    'upstream-credential-bundle': c.upstream.tls?.credentialBundle,
    'upstream-trust-bundle': c.upstream.tls?.trustBundle,
    'extproc-credential-bundle': extProc?.credentialBundle,
    'extproc-trust-bundle': extProc?.trustBundle,
  };
}

/** Runs one check, its UsageError added to `problems` (named where the config file set it); undefined then. */
async function checked<T>(problems: string[], check: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    problems.push(...(err instanceof ConfigProblems ? err.problems : [withoutFile(err.message)]));
    return undefined;
  }
}

export async function validateProxy(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ValidConfig> {
  // Every problem in one run: bad values and unreadable secrets, then every missing file, then what the files hold
  // and the filter modules (those only once every file is there: each check would fail on the first gap again).
  const problems: string[] = [];
  const read = readProxyConfig(argv, env, { problems });
  if (read.kind === 'help') throw new UsageError('validate takes the proxy\'s flags; see actor-edge proxy --help');
  const config = read.config;
  problems.splice(0, problems.length, ...problems.map(withoutFile));
  problems.push(...missingFiles(filesInUse(config), read.sources));
  const files = problems.length === 0 ? await checked(problems, () => checkProxyFiles(config)) : undefined;
  const filters = await checked(problems, () => loadUserFilters(config.chain.filters, { log: createStderrLogger('validate'), actorSuffix: config.actorSuffix }));
  if (problems.length > 0 || files === undefined || filters === undefined) throw new ConfigProblems(problems);
  const names = filters.map((f, i) => `${f.name} (${config.chain.filters[i]?.module ?? ''})`);
  const upstream = config.upstream.tls === undefined
    ? 'plaintext to the workers'
    : `mTLS to the workers as ${files.upstreamIdentity?.join(', ') || 'an identity without URI SAN'}, accepting ${config.upstream.tls.spiffePrefix}…`;
  return {
    component: 'proxy',
    file: read.file,
    warnings: read.warnings,
    plan: [
      ...listeners(config, files),
      ['processes', config.workers === 1 ? '1' : `${config.workers} ingress workers and a primary (node:cluster)`],
      ['chain', chain(config, names)],
      ['upstream', `${upstream}; route timeout ${config.upstream.routeTimeoutMs} ms, connect timeout ${config.upstream.connectTimeoutMs} ms`],
      ['access log', accessLogPlan(config.ops.accessLog)],
    ],
    config,
  };
}

function accessLogPlan(target: ProxyConfig['ops']['accessLog']): string {
  switch (target.kind) {
    case 'off':
      return 'off';
    case 'stdout':
      return 'one JSON line per request on stdout';
    case 'file':
      return `one JSON line per request, appended to ${target.path} (reopened on SIGUSR1)`;
  }
}
