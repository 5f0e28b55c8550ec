import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../lib/flags.js';
import { readProxyConfig } from './config.js';

const read = (argv: string[], env: NodeJS.ProcessEnv = {}) => readProxyConfig(argv, env).config;

test('the ext_proc hop: plaintext without files; both files give mTLS that accepts extproc\'s identity by default', () => {
  assert.equal(read([])?.extProc.tls, undefined);
  assert.deepEqual(read([], { PROXY_EXTPROC_CREDENTIAL_BUNDLE: 'p.pem', PROXY_EXTPROC_TRUST_BUNDLE: 'ca.pem' })?.extProc.tls, {
    credentialBundle: 'p.pem',
    trustBundle: 'ca.pem',
    serverIdentity: { kind: 'id', text: 'spiffe://cluster.local/ns/actor-edge/sa/extproc' },
    watchIntervalMs: 1000,
  });
  assert.equal(read([])?.ops.certExpiryWarningHours, 168);
});

test('one file without the other, or an extproc identity that is not a SPIFFE ID, is a usage error', () => {
  assert.throws(() => read(['--extproc-credential-bundle', 'p.pem']), (e: unknown) => e instanceof UsageError && /go together/.test(e.message));
  assert.throws(() => read(['--extproc-trust-bundle', 'ca.pem']), UsageError);
  assert.throws(
    () => read(['--extproc-credential-bundle', 'p.pem', '--extproc-trust-bundle', 'ca.pem', '--extproc-spiffe-id', 'extproc.internal']),
    (e: unknown) => e instanceof UsageError && /--extproc-spiffe-id/.test(e.message),
  );
});
