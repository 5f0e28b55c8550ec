/** The stub exports the seconds until the first of its certificates expires (here: its in-process workers'), and nothing without TLS. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testPki, type TestPki } from '../lib/tls/testing/pki.js';
import { startTestStub } from './testing/stub-alone.js';

let pki: TestPki;
describe('certificate-expiry', () => {
  before(async () => {
    pki = await testPki();
  });
  after(async () => {
    await pki.close();
  });

  test('actor_edge_apiserver_stub_tls_certificate_expiry_seconds: the workers\' 30-day certificate, absent without TLS', async () => {
    const tls = await startTestStub({
      workers: 1,
      actors: 1,
      workerTls: { credentialBundle: pki.files.worker, clientCa: pki.files.ca, clientIdentity: pki.ids.proxy },
    });
    const plain = await startTestStub({ workers: 1, actors: 1 });
    try {
      const text = await (await fetch(`http://${tls.admin}/metrics`)).text();
      const seconds = Number(/^actor_edge_apiserver_stub_tls_certificate_expiry_seconds (\d+)$/m.exec(text)?.[1]);
      assert.ok(seconds > 29 * 86400 && seconds <= 30 * 86400, String(seconds));
      assert.doesNotMatch(await (await fetch(`http://${plain.admin}/metrics`)).text(), /certificate_expiry/);
    } finally {
      await tls.close();
      await plain.close();
    }
  });
});
