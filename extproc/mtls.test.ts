/**
 * extproc's ext_proc listener with mTLS (in the test's process, from its flags): the data plane's identity is
 * served; a plaintext gRPC client, a TLS client without a certificate, one from another CA, an expired one, one
 * with another identity, one that offers TLS 1.2 only and one that negotiates no ALPN are all refused before any
 * RPC, each counted by its reason; `openssl s_client` without a certificate is told "certificate required"; a
 * rotated credential bundle is served to new connections while an open stream goes on.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import type { InProcessComponent } from '../lib/testing/component.js';
import { readCredentialBundle } from '../lib/tls/files.js';
import { replaceFile, testPki, type TestPki } from '../lib/tls/testing/pki.js';
import { waitFor } from '../lib/testing/wait.js';
import { EnvoyLikeClient } from './testing/envoy-like-client.js';
import { pino } from 'pino';
import { UsageError } from '../lib/flags.js';
import { extprocConfigOf } from './config.js';
import { startExtproc } from './server.js';
import { startExtprocInProcess } from './testing/in-process.js';

const run = promisify(execFile);

describe('extproc serving mTLS', () => {
  let pki: TestPki;
  let extproc: InProcessComponent;
  let served: string;
  let address: string;
  let port: number;

  before(async () => {
    pki = await testPki();
    served = path.join(pki.dir, 'extproc-served.pem');
    await copyFile(pki.files.extproc, served);
    extproc = await startExtprocInProcess([
      '--listen', '127.0.0.1:0',
      '--admin', '127.0.0.1:0',
      '--apiserver', '127.0.0.1:1',
      '--tls-credential-bundle', served,
      '--tls-client-ca', pki.files.ca,
      '--tls-watch-ms', '50',
    ]);
    address = extproc.addresses.grpc!;
    port = Number(address.slice(address.lastIndexOf(':') + 1));
  });

  after(async () => {
    await extproc?.stop();
    await pki?.close();
  });

  /** grpc-js's own TLS client: the CA, optionally a client bundle; extproc is judged by the test, not by name. */
  async function sslCredentials(bundle?: string): Promise<grpc.ChannelCredentials> {
    const ca = await readFile(pki.files.ca);
    const pair = bundle === undefined ? undefined : readCredentialBundle(bundle, 'bundle');
    return grpc.credentials.createSsl(
      ca,
      pair === undefined ? null : Buffer.from(pair.key),
      pair === undefined ? null : Buffer.from(pair.cert),
      { checkServerIdentity: () => undefined },
    );
  }

  /** One request-headers message on a new stream: the answer's kind, or the gRPC status the stream failed with. */
  async function roundTrip(credentials: grpc.ChannelCredentials): Promise<string> {
    const client = new EnvoyLikeClient(address, credentials);
    try {
      const { call, reader } = client.open();
      call.write(EnvoyLikeClient.requestHeadersMessage({ authority: 'not-an-actor.example' }));
      try {
        const answer = await reader.next();
        return answer.response ?? 'unknown';
      } catch (err) {
        return grpc.status[(err as grpc.ServiceError).code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN';
      } finally {
        call.cancel();
      }
    } finally {
      client.close();
    }
  }

  interface TlsCounts {
    accepted: number;
    refused_handshake: number;
    refused_identity: number;
    refused_alpn: number;
  }

  async function counts(): Promise<TlsCounts> {
    const res = await fetch(`http://${extproc.addresses.admin}/stats`);
    return ((await res.json()) as { tls: TlsCounts }).tls;
  }

  /** Runs `attempt` and returns how each count changed. */
  async function delta(attempt: () => Promise<unknown>): Promise<TlsCounts> {
    const before = await counts();
    await attempt();
    // The server may record a refusal just after the client gave up.
    let after = await counts();
    await waitFor(async () => {
      after = await counts();
      return Object.values(after).reduce((a, b) => a + b, 0) > Object.values(before).reduce((a, b) => a + b, 0);
    }, 5000);
    return {
      accepted: after.accepted - before.accepted,
      refused_handshake: after.refused_handshake - before.refused_handshake,
      refused_identity: after.refused_identity - before.refused_identity,
      refused_alpn: after.refused_alpn - before.refused_alpn,
    };
  }

  test('the proxy identity is served: an immediate response for a host that names no actor', async () => {
    let answer = '';
    const d = await delta(async () => (answer = await roundTrip(await sslCredentials(pki.files.proxy))));
    assert.equal(answer, 'immediate_response');
    assert.equal(d.accepted, 1);
  });

  const refusals: readonly (readonly [string, () => Promise<grpc.ChannelCredentials>, keyof TlsCounts])[] = [
    ['a plaintext gRPC client', async () => grpc.credentials.createInsecure(), 'refused_handshake'],
    ['a TLS client without a certificate', () => sslCredentials(), 'refused_handshake'],
    ['a client certificate from another CA', () => sslCredentials(pki.badClients.otherCa), 'refused_handshake'],
    ['an expired client certificate', () => sslCredentials(pki.badClients.expired), 'refused_handshake'],
    ['a client certificate with another identity', () => sslCredentials(pki.wrongProxy), 'refused_identity'],
    ['a certificate with the right CA but the worker identity (server usage only)', () => sslCredentials(pki.files.worker), 'refused_handshake'],
  ];

  for (const [what, credentials, outcome] of refusals) {
    test(`refused before any RPC: ${what}`, async () => {
      let answer = '';
      const d = await delta(async () => (answer = await roundTrip(await credentials())));
      assert.equal(answer, 'UNAVAILABLE', `${what}: the stream must fail`);
      assert.equal(d.accepted, 0, `${what} was accepted`);
      assert.ok(d[outcome] >= 1, `${what}: counted as ${outcome}: ${JSON.stringify(d)}`);
    });
  }

  /** A raw TLS handshake with the proxy's certificate and `opts`; the ALPN it got, or the error. */
  function rawHandshake(opts: tls.ConnectionOptions): Promise<string> {
    const bundle = readCredentialBundle(pki.files.proxy, 'proxy');
    return new Promise((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, cert: bundle.cert, key: bundle.key, checkServerIdentity: () => undefined, rejectUnauthorized: false, ...opts });
      socket.once('secureConnect', () => {
        const alpn = socket.alpnProtocol;
        // In TLS 1.3 the server judges after the client finished: wait for its verdict (data or close).
        socket.once('close', () => resolve(`closed (alpn ${String(alpn)})`));
        socket.once('data', () => resolve(`served (alpn ${String(alpn)})`));
        socket.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
      });
      socket.once('error', (err) => resolve(`error ${err.message}`));
    });
  }

  test('refused: a client offering TLS 1.2 at most', async () => {
    let answer = '';
    const d = await delta(async () => (answer = await rawHandshake({ maxVersion: 'TLSv1.2', ALPNProtocols: ['h2'] })));
    assert.match(answer, /^error .*protocol version/);
    assert.equal(d.refused_handshake, 1);
  });

  test('refused: a client that negotiates no ALPN (or not h2)', async () => {
    let none = '';
    const d = await delta(async () => (none = await rawHandshake({ ALPNProtocols: [] })));
    assert.match(none, /^closed/);
    assert.equal(d.refused_alpn, 1);
    const http1 = await rawHandshake({ ALPNProtocols: ['http/1.1'] });
    assert.match(http1, /^error .*no application protocol/);
  });

  test('openssl s_client without a certificate is told "certificate required"', async () => {
    const { stdout, stderr } = await run('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-alpn', 'h2', '-CAfile', pki.files.ca, '-ign_eof'], { timeout: 10_000 }).catch(
      (err: { stdout: string; stderr: string }) => err,
    );
    assert.match(`${stdout}\n${stderr}`, /alert certificate required/);
  });

  test('/metrics: actor_edge_extproc_tls_handshakes_total by outcome, and the certificate expiry gauge', async () => {
    const text = await (await fetch(`http://${extproc.addresses.admin}/metrics`)).text();
    assert.match(text, /actor_edge_extproc_tls_handshakes_total\{outcome="accepted"\} [1-9]/);
    assert.match(text, /actor_edge_extproc_tls_handshakes_total\{outcome="refused_identity"\} [1-9]/);
    const expiry = /actor_edge_extproc_tls_certificate_expiry_seconds (\d+)/.exec(text);
    assert.ok(expiry, 'the expiry gauge is exported');
    const days = Number(expiry[1]) / 86400;
    assert.ok(days > 28 && days <= 30, `the first certificate expires in ${days} days (the development certificates: 30)`);
  });

  test('rotation: new connections get the new certificate; a stream open across it goes on', async () => {
    const client = new EnvoyLikeClient(address, await sslCredentials(pki.files.proxy));
    try {
      const { call, reader } = client.open();
      call.write(EnvoyLikeClient.requestHeadersMessage({ authority: 'not-an-actor.example' }));
      assert.equal((await reader.next()).response, 'immediate_response');
      await replaceFile(pki.extprocRotated, served);
      const rotated = new X509Certificate(readCredentialBundle(pki.extprocRotated, 'rotated').cert).serialNumber;
      await waitFor(async () => (await presentedSerial()) === rotated, 5000);
      // The stream opened before the rotation is still served.
      call.write({ response_headers: { headers: { headers: [{ key: ':status', raw_value: Buffer.from('200') }] } }, metadata_context: {} });
      assert.equal((await reader.next()).response, 'response_headers');
      call.end();
    } finally {
      client.close();
    }
    const logs = extproc.logs().map((l) => l.msg);
    assert.ok(logs.includes('ext_proc TLS credentials reloaded'), 'the reload is logged');
  });

  /** The serial number of the certificate a new connection is shown. */
  function presentedSerial(): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ALPNProtocols: ['h2'], rejectUnauthorized: false }, () => {
        resolve(socket.getPeerX509Certificate()?.serialNumber ?? '');
        socket.destroy();
      });
      socket.once('error', reject);
    });
  }

  test('a missing credential bundle stops the start: a usage error naming the flag and the file', async () => {
    const config = extprocConfigOf(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', '127.0.0.1:1', '--tls-credential-bundle', '/nonexistent/extproc.pem', '--tls-client-ca', pki.files.ca], {});
    await assert.rejects(startExtproc(config, pino({ level: 'silent' })), (e: unknown) => e instanceof UsageError && /--tls-credential-bundle "\/nonexistent\/extproc.pem" cannot be read/.test(e.message));
  });
});
