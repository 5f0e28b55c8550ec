import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../lib/flags.js';
import { readExtprocConfig } from './config.js';

const read = (argv: string[]) => readExtprocConfig(argv, {}).config;

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
  assert.equal(readExtprocConfig([], { EXTPROC_CERT_EXPIRY_WARNING_HOURS: '24' }).config?.certExpiryWarningHours, 24);
});
