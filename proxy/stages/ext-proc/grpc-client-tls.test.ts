/**
 * The proxy's ext_proc client with mTLS, against ext_proc servers made with grpc-js's own TLS server credentials
 * (client certificates required): the configured identity is reached; a server with another identity, one from
 * another CA, an expired one and a plaintext one are refused (each stream fails UNAVAILABLE, the refusal logged
 * with what the server presented); a credential rotation sends new streams through a new channel with the new
 * certificate while a stream open across it finishes on the old one, and the readiness check's health client
 * follows it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { loadProto, lookup } from '../../../lib/proto.js';
import { UsageError } from '../../../lib/flags.js';
import { readCredentialBundle } from '../../../lib/tls/files.js';
import { parseSpiffeMatch } from '../../../lib/tls/identity.js';
import { replaceFile, testPki, type TestPki } from '../../../lib/tls/testing/pki.js';
import { waitFor } from '../../../lib/testing/wait.js';
import { Counters } from '../../ops/stats.js';
import type { ExtProcTlsConfig } from './config.js';
import { GrpcExtProcClient } from './grpc-client.js';
import { probeExtProc } from './probe.js';
import { checkHealth } from '../../../lib/grpc-health.js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE, type ProcessingRequest } from './messages.js';

let pki: TestPki;

describe('grpc-client-tls', () => {
  before(async () => {
    pki = await testPki();
  });
  after(async () => {
    await pki.close();
  });

  interface TestServer {
    readonly address: string;
    /** Serial numbers of the client certificates the calls came with, in order. */
    readonly clientSerials: string[];
    close(): void;
  }

  /** An ext_proc server that answers each message with CONTINUE; TLS with `bundle` (client certificates required) or plaintext. */
  async function startServer(bundle: string | 'plaintext'): Promise<TestServer> {
    const server = new grpc.Server();
    const clientSerials: string[] = [];
    const service = lookup<grpc.ServiceClientConstructor>(loadProto(EXT_PROC_PROTO), EXT_PROC_SERVICE).service;
    server.addService(service, {
      Process: (call: grpc.ServerDuplexStream<ProcessingRequest, unknown>) => {
        const cert = call.getAuthContext().sslPeerCertificate;
        if (cert !== undefined) clientSerials.push(new X509Certificate(cert.raw).serialNumber);
        call.on('data', (m: ProcessingRequest) => call.write(m.response_headers != null ? { response_headers: { response: {} } } : { request_headers: { response: {} } }));
        call.on('end', () => call.end());
        call.on('error', () => undefined);
      },
    });
    let credentials = grpc.ServerCredentials.createInsecure();
    if (bundle !== 'plaintext') {
      const pair = readCredentialBundle(bundle, 'server');
      credentials = grpc.ServerCredentials.createSsl(await readFile(pki.files.ca), [{ cert_chain: Buffer.from(pair.cert), private_key: Buffer.from(pair.key) }], true);
    }
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))));
    return { address: `127.0.0.1:${port}`, clientSerials, close: () => server.forceShutdown() };
  }

  /** A logger whose lines the test reads. */
  function capturedLog(): { log: pino.Logger; lines: Record<string, unknown>[] } {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    return { log: pino({ level: 'info' }, sink), lines };
  }

  function tlsConfig(credentialBundle = pki.files.proxy, watchIntervalMs = 1000): ExtProcTlsConfig {
    return { credentialBundle, trustBundle: pki.files.ca, serverIdentity: parseSpiffeMatch(pki.ids.extproc), watchIntervalMs };
  }

  const HEADERS: ProcessingRequest = { request_headers: { headers: { headers: [{ key: ':authority', raw_value: Buffer.from('a.demo.example') }] }, end_of_stream: true } };

  function oneRoundTrip(server: TestServer, tls: ExtProcTlsConfig | undefined, log: pino.Logger): Promise<string> {
    return probeExtProc({ address: server.address, authority: 'a.demo.example', messageTimeoutMs: 5000, tls, log });
  }

  test('the configured extproc identity is reached over mTLS', async () => {
    const server = await startServer(pki.files.extproc);
    try {
      const { log, lines } = capturedLog();
      assert.equal(await oneRoundTrip(server, tlsConfig(), log), 'response');
      assert.equal(server.clientSerials.length, 1, 'the server saw the proxy certificate');
      assert.ok(lines.some((l) => l.msg === 'mTLS to ext_proc'));
    } finally {
      server.close();
    }
  });

  const impostors: readonly (readonly [string, () => string | 'plaintext', RegExp])[] = [
    ['another identity (a worker certificate from the right CA)', () => pki.files.worker, /no URI SAN is spiffe:\/\/cluster\.local\/ns\/actor-edge\/sa\/extproc/],
    ['another CA', () => pki.badExtprocs.otherCa, /certificate|verify/i],
    ['an expired certificate', () => pki.badExtprocs.expired, /expired/i],
    ['a plaintext server', () => 'plaintext', /./],
  ];

  for (const [what, bundle, why] of impostors) {
    test(`an ext_proc server with ${what} is refused`, async () => {
      const server = await startServer(bundle());
      try {
        const { log, lines } = capturedLog();
        assert.equal(await oneRoundTrip(server, tlsConfig(), log), 'UNAVAILABLE');
        const refused = lines.find((l) => l.msg === 'ext_proc server refused (identity, chain or handshake)');
        assert.ok(refused, `the refusal is logged: ${JSON.stringify(lines)}`);
        assert.match(String(refused.why), why);
        assert.equal(server.clientSerials.length, 0, 'no call reached the impostor');
      } finally {
        server.close();
      }
    });
  }

  test('without tls the hop is plaintext, and that is logged as a warning', async () => {
    const server = await startServer('plaintext');
    try {
      const { log, lines } = capturedLog();
      assert.equal(await oneRoundTrip(server, undefined, log), 'response');
      assert.ok(lines.some((l) => l.level === 40 && String(l.msg).startsWith('ext_proc hop is plaintext')));
    } finally {
      server.close();
    }
  });

  test('rotation: new streams use a new channel with the new certificate; a stream open across it finishes', async () => {
    const server = await startServer(pki.files.extproc);
    const bundle = path.join(pki.dir, 'proxy-extproc-rotating.pem');
    await copyFile(pki.files.proxy, bundle);
    const { log } = capturedLog();
    const client = new GrpcExtProcClient({ address: server.address, messageTimeoutMs: 5000, counters: new Counters(), tls: tlsConfig(bundle, 20), log });
    try {
      const open = client.open();
      assert.equal((await open.roundTrip(HEADERS)).kind, 'response');
      // The readiness check's health client is on the same mTLS channel (this server has no health service).
      const healthBefore = client.healthClient();
      assert.equal((await checkHealth(healthBefore, '', 5000).answer).kind, 'no-health-service');
      await replaceFile(pki.proxyRotated, bundle);
      await waitFor(() => client.channels === 2, 5000, 'a new channel after the rotation');
      const healthAfter = client.healthClient();
      assert.notEqual(healthAfter, healthBefore, 'the health client follows the new channel');
      assert.equal((await checkHealth(healthAfter, '', 5000).answer).kind, 'no-health-service');
      // The stream opened before the rotation still gets its answers.
      assert.equal((await open.roundTrip({ response_headers: { headers: { headers: [] }, end_of_stream: false } })).kind, 'response');
      open.close();
      const next = client.open();
      assert.equal((await next.roundTrip(HEADERS)).kind, 'response');
      next.close();
      const original = new X509Certificate(readCredentialBundle(pki.files.proxy, 'p').cert).serialNumber;
      const rotated = new X509Certificate(readCredentialBundle(pki.proxyRotated, 'p').cert).serialNumber;
      assert.deepEqual(server.clientSerials, [original, rotated]);
    } finally {
      client.close();
      server.close();
    }
  });

  test('a missing or unusable file stops the start: a usage error naming the flag and the file', async () => {
    const { log } = capturedLog();
    assert.throws(
      () => new GrpcExtProcClient({ address: '127.0.0.1:1', messageTimeoutMs: 1000, counters: new Counters(), tls: tlsConfig('/nonexistent/proxy.pem'), log }),
      (e: unknown) => e instanceof UsageError && /--extproc-credential-bundle "\/nonexistent\/proxy.pem" cannot be read/.test(e.message),
    );
    assert.throws(
      () => new GrpcExtProcClient({ address: '127.0.0.1:1', messageTimeoutMs: 1000, counters: new Counters(), tls: { ...tlsConfig(), trustBundle: pki.files.proxy.replace('proxy.pem', 'ca.key') }, log }),
      (e: unknown) => e instanceof UsageError && /--extproc-trust-bundle .* is not usable: no CERTIFICATE block/.test(e.message),
    );
  });
});
