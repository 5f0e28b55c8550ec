/**
 * The worker tunnel's mTLS over real TLS: it presents a certificate whose only SAN is its SPIFFE URI, serves the
 * configured client identity, and refuses (and counts) a client with another identity or from another CA.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import pino from 'pino';
import { readCredentialBundle, readTrustBundle } from '../../lib/tls/files.js';
import { testPki, type TestPki } from '../../lib/tls/testing/pki.js';
import { waitFor } from '../../lib/testing/wait.js';
import { WorkerListener } from './listener.js';
import { startWorkerTls, type WorkerTls } from './tls.js';

let pki: TestPki;
let workerTls: WorkerTls;
let listener: WorkerListener;

describe('tls', () => {
  before(async () => {
    pki = await testPki();
    workerTls = startWorkerTls({ credentialBundle: pki.files.worker, clientCa: pki.files.ca, clientIdentity: pki.ids.proxy }, pino({ level: 'silent' }));
    listener = new WorkerListener((_req, res) => res.end('ok'), '127.0.0.1', 0, { tls: workerTls });
    await listener.open();
  });
  after(async () => {
    await listener.close();
    workerTls.close();
    await pki.close();
  });

  /** One HTTP/1.1 GET over a fresh TLS connection with `bundle` as the client certificate; resolves with what came back. */
  function exchange(bundle: string): Promise<{ peerSan: string | undefined; answer: string; error?: string }> {
    const b = readCredentialBundle(bundle, 'client');
    return new Promise((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: listener.boundPort, cert: b.cert, key: b.key, ca: readTrustBundle(pki.files.ca, 'ca'), checkServerIdentity: () => undefined });
      let answer = '';
      let peerSan: string | undefined;
      socket.on('secureConnect', () => {
        peerSan = socket.getPeerCertificate().subjectaltname;
        socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('error', (err) => resolve({ peerSan, answer, error: (err as { code?: string }).code ?? err.message }));
      socket.on('close', () => resolve({ peerSan, answer }));
    });
  }

  test('the worker presents only its SPIFFE URI and serves the configured client identity', async () => {
    const before = workerTls.counters.snapshot();
    const r = await exchange(pki.files.proxy);
    assert.equal(r.peerSan, `URI:${pki.ids.worker}`);
    assert.match(r.answer, /^HTTP\/1\.1 200 /);
    assert.equal(workerTls.counters.accepted, before.accepted + 1);
  });

  test('a client from the right CA with another identity is refused before any request is read, and counted', async () => {
    const before = workerTls.counters.snapshot();
    const r = await exchange(pki.wrongProxy);
    assert.equal(r.answer, '');
    assert.equal(workerTls.counters.refusedIdentity, before.refusedIdentity + 1);
    assert.equal(workerTls.counters.accepted, before.accepted);
  });

  test('a client from another CA fails the handshake, and is counted', async () => {
    const before = workerTls.counters.snapshot();
    const r = await exchange(pki.badWorkers.otherCa);
    assert.equal(r.answer, '');
    assert.ok(r.error !== undefined || r.answer === '');
    // The server counts when it rejects the certificate; with TLS 1.3 that can be just after the client's side ends.
    await waitFor(() => workerTls.counters.refusedHandshake > before.refusedHandshake, 5000, 'the refused handshake');
    assert.equal(workerTls.counters.refusedHandshake, before.refusedHandshake + 1);
    assert.equal(workerTls.counters.accepted, before.accepted);
  });

  test('the worker certificate file carries no IP or DNS SAN', () => {
    const san = readCredentialBundle(pki.files.worker, 'worker').leaf.subjectAltName;
    assert.equal(san, `URI:${pki.ids.worker}`);
  });
});
