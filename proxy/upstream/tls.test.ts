/**
 * proxy → worker mTLS over real TLS: a worker from the trust bundle with a URI SAN under the prefix is used; a
 * worker from another CA, outside the prefix, expired, or with an IP SAN only is refused as `identity-rejected`
 * with what it presented; bad files fail the start with the flag and file named; a rotation that cannot be loaded
 * keeps the old credentials, one that can is used for new connections.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Pool } from 'undici';
import pino from 'pino';
import { readCredentialBundle, readTrustBundle, TlsFileError } from '../../lib/tls/files.js';
import { uriSans } from '../../lib/tls/identity.js';
import { replaceFile, replaceText, testPki, type TestPki } from '../../lib/tls/testing/pki.js';
import { waitFor } from '../../lib/testing/wait.js';
import { classifyFailure } from './outcome.js';
import { createTlsConnector, loadUpstreamTls, startUpstreamTls, UpstreamIdentityError } from './tls.js';
import { DEFAULT_SPIFFE_PREFIX } from '../../lib/tls/identity.js';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';

let pki: TestPki;
const servers: https.Server[] = [];

describe('tls', () => {
  before(async () => {
    pki = await testPki();
  });
  after(async () => {
    for (const s of servers) s.close();
    await pki.close();
  });

  /** A worker-like TLS server presenting `bundle`, requiring a client certificate from the dev CA; answers its peer's URI. */
  async function worker(bundle: string): Promise<string> {
    const b = readCredentialBundle(bundle, 'worker');
    const server = https.createServer({ cert: b.cert, key: b.key, ca: readTrustBundle(pki.files.ca, 'ca'), requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.end(uriSans(peer.subjectaltname).join(','));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  function pool(address: string, material = loadUpstreamTls({ credentialBundle: pki.files.proxy, trustBundle: pki.files.ca })): Pool {
    return new Pool(`https://${address}`, { connect: createTlsConnector({ material: () => material, spiffePrefix: DEFAULT_SPIFFE_PREFIX, connectTimeoutMs: 2000 }) });
  }

  async function get(p: Pool): Promise<string> {
    const res = await p.request({ path: '/', method: 'GET' });
    return res.body.text();
  }

  test('a worker from the trust bundle with a URI SAN under the prefix is used, and sees the proxy identity', async () => {
    const p = pool(await worker(pki.files.worker));
    assert.equal(await get(p), pki.ids.proxy);
    await p.close();
  });

  for (const [name, pick, reason] of [
    ['from another CA', (k: TestPki) => k.badWorkers.otherCa, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/],
    ['outside the SPIFFE prefix', (k: TestPki) => k.badWorkers.outsidePrefix, /no URI SAN starts with spiffe:\/\/cluster\.local\//],
    ['expired', (k: TestPki) => k.badWorkers.expired, /CERT_HAS_EXPIRED/],
    ['with an IP SAN only', (k: TestPki) => k.badWorkers.ipOnly, /no URI SAN/],
  ] as const) {
    test(`a worker ${name} is refused as identity-rejected, with what it presented`, async () => {
      const p = pool(await worker(pick(pki)));
      const err = await get(p).then(
        () => assert.fail('the request must not be sent'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof UpstreamIdentityError, `got ${String(err)}`);
      assert.match(err.reason, reason);
      const presented = readCredentialBundle(pick(pki), 'w').leaf.subjectAltName ?? '';
      assert.equal(err.presented, presented);
      const outcome = classifyFailure(err, false, false);
      assert.equal(outcome.kind, 'identity-rejected');
      await p.close();
    });
  }

  test('a missing or unusable bundle at start is an error naming the flag and the file', () => {
    assert.throws(
      () => loadUpstreamTls({ credentialBundle: '/nonexistent/bundle.pem', trustBundle: pki.files.ca }),
      (e: unknown) => e instanceof TlsFileError && /--upstream-credential-bundle "\/nonexistent\/bundle.pem" cannot be read \(ENOENT\)/.test(e.message),
    );
    assert.throws(
      () => loadUpstreamTls({ credentialBundle: pki.files.ca, trustBundle: pki.files.ca }),
      (e: unknown) => e instanceof TlsFileError && /--upstream-credential-bundle .* no PRIVATE KEY block/.test(e.message),
    );
    assert.throws(
      () => loadUpstreamTls({ credentialBundle: pki.files.proxy, trustBundle: path.join(pki.dir, 'missing-ca.pem') }),
      (e: unknown) => e instanceof TlsFileError && /--upstream-trust-bundle/.test(e.message),
    );
  });

  test('rotation: a broken bundle keeps the old credentials (error counted), a new one is used for new connections', async () => {
    const bundle = path.join(pki.dir, 'rotating-proxy.pem');
    await copyFile(pki.files.proxy, bundle);
    const counters = { tlsReloads: 0, tlsReloadErrors: 0 };
    const tls = startUpstreamTls(
      { credentialBundle: bundle, trustBundle: pki.files.ca, spiffePrefix: DEFAULT_SPIFFE_PREFIX, watchIntervalMs: 20 },
      2000,
      pino({ level: 'silent' }),
      counters,
    );
    const address = await worker(pki.files.worker);
    const fresh = (): Pool => new Pool(`https://${address}`, { connect: tls.connector });
    try {
      let p = fresh();
      assert.equal(await get(p), pki.ids.proxy);
      await p.close();

      await replaceText(bundle, 'not a PEM file\n');
      await waitFor(() => counters.tlsReloadErrors > 0, 5000, 'the failed reload');
      p = fresh();
      assert.equal(await get(p), pki.ids.proxy, 'the old credentials stay in use');
      await p.close();

      await replaceFile(pki.wrongProxy, bundle);
      await waitFor(() => counters.tlsReloads > 0, 5000, 'the reload');
      p = fresh();
      assert.equal(await get(p), 'spiffe://cluster.local/ns/other/sa/intruder', 'new connections use the new credentials');
      await p.close();
    } finally {
      tls.close();
    }
  });
});
