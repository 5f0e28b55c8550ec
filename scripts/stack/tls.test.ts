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

test('the local egress: the proxy listens with the egress certificate and trusts the actor CA; the stub mints from that CA, simulates the destinations and seeds policies its own parser accepts', async () => {
  const { egressEnv, LOCAL_EGRESS } = await import('./wiring.js');
  const { readStubConfig } = await import('../../apiserver-stub/config.js');
  const env = egressEnv({ ca: 'c/ca.pem', proxy: '', extproc: '', controlPlane: '', ingress: '', egress: 'c/proxy-egress.pem', actorCa: 'c/actor-ca.pem', worker: '', workers: [] });
  assert.equal(env.PROXY_EGRESS_LISTEN, LOCAL_EGRESS.listen);
  assert.equal(env.PROXY_EGRESS_TLS_CERT, 'c/proxy-egress.pem');
  assert.equal(env.PROXY_EGRESS_CLIENT_CA, 'c/actor-ca.pem');
  assert.equal(env.APISERVER_ACTOR_CA_DIR, 'c');
  const read = readStubConfig([], { APISERVER_DESTINATIONS: env.APISERVER_DESTINATIONS, APISERVER_SEED_EGRESS_POLICIES: env.APISERVER_SEED_EGRESS_POLICIES });
  assert.ok(read.kind === 'config');
  assert.deepEqual(read.config.destinations.map((d) => `${d.host}:${d.port}`), [...LOCAL_EGRESS.destinations]);
  assert.deepEqual(Object.keys(LOCAL_EGRESS.policies), ['actor-000', 'actor-001']);
});
