import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stackTlsEnv } from './tls.js';

test('every hop gets its files through its own variables, the workers accept only the proxy identity', () => {
  const env = stackTlsEnv({ ca: 'ca.pem', proxy: 'proxy.pem', extproc: 'extproc.pem', controlPlane: 'cp.pem', ingress: 'ingress.pem', egress: 'egress.pem', actorCa: 'actor-ca.pem', worker: 'worker.pem', workers: [] });
  assert.equal(env.PROXY_UPSTREAM_CREDENTIAL_BUNDLE, 'proxy.pem');
  assert.equal(env.PROXY_UPSTREAM_TRUST_BUNDLE, 'ca.pem');
  assert.equal(env.EXTPROC_APISERVER_CREDENTIAL_BUNDLE, 'extproc.pem');
  assert.equal(env.APISERVER_TLS_CREDENTIAL_BUNDLE, 'cp.pem');
  assert.equal(env.WORKER_TLS_CREDENTIAL_BUNDLE, 'worker.pem');
  assert.equal(env.WORKER_TLS_CLIENT_IDENTITY, 'spiffe://cluster.local/ns/actor-edge/sa/proxy');
  // The ext_proc hop: extproc serves its identity and accepts only the proxy's; the proxy accepts only extproc's.
  assert.equal(env.EXTPROC_TLS_CREDENTIAL_BUNDLE, 'extproc.pem');
  assert.equal(env.EXTPROC_TLS_CLIENT_CA, 'ca.pem');
  assert.equal(env.EXTPROC_TLS_CLIENT_SPIFFE_ID, 'spiffe://cluster.local/ns/actor-edge/sa/proxy');
  assert.equal(env.PROXY_EXTPROC_CREDENTIAL_BUNDLE, 'proxy.pem');
  assert.equal(env.PROXY_EXTPROC_TRUST_BUNDLE, 'ca.pem');
  assert.equal(env.PROXY_EXTPROC_SPIFFE_ID, 'spiffe://cluster.local/ns/actor-edge/sa/extproc');
});
