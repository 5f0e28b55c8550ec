import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../lib/flags.js';
import { readExtprocConfig, type ExtprocConfig } from './config.js';

function configOf(argv: string[], env: NodeJS.ProcessEnv = {}): ExtprocConfig {
  const read = readExtprocConfig(argv, env);
  assert.equal(read.kind, 'config');
  return (read as { config: ExtprocConfig }).config;
}

test('extproc reads a nested config file, below its flags and variables', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'extproc-config-'));
  try {
    writeFileSync(path.join(dir, 'token'), 'from-a-file\n');
    const file = path.join(dir, 'extproc.yaml');
    writeFileSync(
      file,
      [
        'grpc: { listen: 127.0.0.1:6000, streamIdleTimeoutMs: 0 }',
        'admin: { listen: 127.0.0.1:6001, token: { file: token } }',
        'controlPlane: { address: cp.internal:50052 }',
        'resume: { budgetMs: 9000, parking: on, parkedMax: 10 }',
        'routing: { workerPort: 9443, actorSuffix: Actors.Example }',
        '',
      ].join('\n'),
    );
    const c = configOf(['--config', file, '--park-budget-ms', '100'], { EXTPROC_LISTEN: '127.0.0.1:6002' });
    assert.deepEqual({ ...c.listen }, { host: '127.0.0.1', port: 6002 }, 'the variable overrides the file');
    assert.deepEqual({ ...c.admin }, { host: '127.0.0.1', port: 6001 });
    assert.equal(c.adminToken, 'from-a-file');
    assert.equal(c.apiserver, 'cp.internal:50052');
    assert.equal(c.resumeBudgetMs, 9000);
    assert.deepEqual(c.parking, { budgetMs: 100 });
    assert.equal(c.parkedMax, 10);
    assert.equal(c.streamIdleTimeoutMs, 0);
    assert.equal(c.workerPort, 9443);
    assert.equal(c.actorSuffix, 'actors.example');
    assert.deepEqual(configOf([]).parking, undefined, 'defaults without a file');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('extproc variables have the EXTPROC_ prefix; WORKER_PORT and ACTOR_SUFFIX still work, with a deprecation warning', () => {
  const read = readExtprocConfig([], { WORKER_PORT: '9443', ACTOR_SUFFIX: 'old.example' });
  assert.equal(read.kind, 'config');
  if (read.kind !== 'config') return;
  assert.equal(read.config.workerPort, 9443);
  assert.equal(read.config.actorSuffix, 'old.example');
  assert.deepEqual([...read.warnings].sort(), [
    'environment variable ACTOR_SUFFIX is deprecated: use EXTPROC_ACTOR_SUFFIX',
    'environment variable WORKER_PORT is deprecated: use EXTPROC_WORKER_PORT',
  ]);
  assert.equal(configOf([], { EXTPROC_WORKER_PORT: '7000', WORKER_PORT: '9443' }).workerPort, 7000, 'the EXTPROC_ name wins');
});

const read = (argv: string[]) => configOf(argv);

test('the ext_proc listener: plaintext without files; both files give mTLS accepting the proxy identity by default', () => {
  assert.equal(read([])?.listenTls, undefined);
  const tls = read(['--tls-credential-bundle', 'e.pem', '--tls-client-ca', 'ca.pem'])?.listenTls;
  assert.deepEqual(tls, { credentialBundle: 'e.pem', clientCa: 'ca.pem', clientIdentity: { kind: 'id', text: 'spiffe://cluster.local/ns/actor-edge/sa/proxy' }, watchIntervalMs: 1000 });
  const prefix = read(['--tls-credential-bundle', 'e.pem', '--tls-client-ca', 'ca.pem', '--tls-client-spiffe-id', 'spiffe://td/ns/edge/'])?.listenTls;
  assert.deepEqual(prefix?.clientIdentity, { kind: 'prefix', text: 'spiffe://td/ns/edge/' });
});

test('one file without the other, or a client identity that is not a SPIFFE ID, is a usage error', () => {
  assert.throws(() => read(['--tls-credential-bundle', 'e.pem']), (e: unknown) => e instanceof UsageError && /go together/.test(e.message));
  assert.throws(() => read(['--tls-client-ca', 'ca.pem']), UsageError);
  assert.throws(
    () => read(['--tls-credential-bundle', 'e.pem', '--tls-client-ca', 'ca.pem', '--tls-client-spiffe-id', 'proxy']),
    (e: unknown) => e instanceof UsageError && /--tls-client-spiffe-id/.test(e.message),
  );
  assert.equal(configOf([], { EXTPROC_CERT_EXPIRY_WARNING_HOURS: '24' }).certExpiryWarningHours, 24);
});
