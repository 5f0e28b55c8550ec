/**
 * The `extproc` phase of the compose check, run inside the proxy container: the ext_proc hop is mTLS both ways.
 * - extproc presents a certificate from the deployment's CA whose only SAN is its SPIFFE ID, and refuses a TLS
 *   client without a certificate ("certificate required") and a plaintext gRPC client (the stream fails);
 * - the proxy's own ext_proc client, with the deployment's files, reaches extproc and refuses an impostor: a gRPC
 *   server started here with another certificate from the same CA (the proxy's HTTPS serving certificate, which
 *   names hosts, not the SPIFFE ID);
 * - extproc's /stats counted the refusals and the accepted connection.
 *
 * Environment: CHECK_TLS_CA (/certs/ca.pem), CHECK_EXTPROC (extproc:50051), CHECK_EXTPROC_ADMIN_INSIDE
 * (http://extproc:9902), CHECK_EXTPROC_SPIFFE_ID, CHECK_PROXY_BUNDLE (/certs/proxy.pem), CHECK_IMPOSTOR_BUNDLE
 * (/certs/proxy-ingress.pem).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { loadProto, lookup } from '../../lib/proto.js';
import { readCredentialBundle } from '../../lib/tls/files.js';
import { parseSpiffeMatch } from '../../lib/tls/identity.js';
import { probeExtProc } from '../../proxy/stages/ext-proc/probe.js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../../lib/wire-contract.js';

const TIMEOUT_MS = 5000;

interface TlsCounts {
  accepted: number;
  refused_handshake: number;
  refused_identity: number;
}

/** A TLS handshake with ALPN h2 and no client certificate: what the server presented, and how it ended. */
function probeWithoutCertificate(host: string, port: number, ca: Buffer): Promise<{ san: string | undefined; ending: string }> {
  return new Promise((resolve) => {
    let san: string | undefined;
    const socket = tls.connect({ host, port, ca, ALPNProtocols: ['h2'], checkServerIdentity: () => undefined });
    const timer = setTimeout(() => socket.destroy(new Error('no answer')), TIMEOUT_MS);
    const end = (ending: string): void => {
      clearTimeout(timer);
      resolve({ san, ending });
    };
    socket.once('secureConnect', () => {
      san = socket.getPeerCertificate().subjectaltname;
      socket.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
    });
    socket.once('data', () => end('served'));
    socket.once('error', (err: NodeJS.ErrnoException) => end(err.code ?? err.message));
    socket.once('close', () => end('closed'));
  });
}

/** One request-headers exchange through the proxy's own ext_proc client; `response` or the failure. */
function exchange(address: string, tlsFiles: { credentialBundle: string; trustBundle: string; id: string } | undefined): Promise<string> {
  return probeExtProc({
    address,
    authority: 'not-an-actor.example',
    messageTimeoutMs: TIMEOUT_MS,
    log: pino({ level: 'silent' }),
    tls: tlsFiles === undefined ? undefined : { ...tlsFiles, serverIdentity: parseSpiffeMatch(tlsFiles.id), watchIntervalMs: 60_000 },
  });
}

/** A gRPC ext_proc server on 127.0.0.1 with `bundle`, requiring client certificates from `ca`. */
async function impostor(bundle: string, ca: Buffer): Promise<{ address: string; calls: () => number; close(): void }> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(lookup<grpc.ServiceClientConstructor>(loadProto(EXT_PROC_PROTO), EXT_PROC_SERVICE).service, {
    Process: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      calls++;
      call.on('data', () => call.write({ request_headers: { response: {} } }));
      call.on('end', () => call.end());
    },
  });
  const pair = readCredentialBundle(bundle, 'impostor');
  const creds = grpc.ServerCredentials.createSsl(ca, [{ cert_chain: Buffer.from(pair.cert), private_key: Buffer.from(pair.key) }], true);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))));
  return { address: `127.0.0.1:${port}`, calls: () => calls, close: () => server.forceShutdown() };
}

async function tlsCounts(admin: string): Promise<TlsCounts> {
  const res = await fetch(`${admin}/stats`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(res.status, 200, `GET ${admin}/stats → ${res.status}`);
  const stats = (await res.json()) as { tls?: TlsCounts };
  assert.ok(stats.tls, 'extproc reports no ext_proc TLS counters: its listener is not mTLS');
  return stats.tls;
}

export async function extprocPhase(log: (text: string) => void): Promise<void> {
  const env = process.env;
  const ca = readFileSync(env.CHECK_TLS_CA ?? '/certs/ca.pem');
  const target = env.CHECK_EXTPROC ?? 'extproc:50051';
  const admin = env.CHECK_EXTPROC_ADMIN_INSIDE ?? 'http://extproc:9902';
  const id = env.CHECK_EXTPROC_SPIFFE_ID ?? 'spiffe://cluster.local/ns/actor-edge/sa/extproc';
  const proxyBundle = env.CHECK_PROXY_BUNDLE ?? '/certs/proxy.pem';
  const name = target.slice(0, target.lastIndexOf(':'));
  const port = Number(target.slice(target.lastIndexOf(':') + 1));
  const [ip] = await new Resolver({ timeout: 2000, tries: 1 }).resolve4(name);
  assert.ok(ip !== undefined, `${name} does not resolve`);

  const before = await tlsCounts(admin);
  const probe = await probeWithoutCertificate(ip, port, ca);
  assert.equal(probe.san, `URI:${id}`, `${target} presented ${probe.san}`);
  assert.match(probe.ending, /CERTIFICATE_REQUIRED/, `${target} answered a TLS client without a certificate: ${probe.ending}`);
  log(`${target}: TLS 1.3, presents ${probe.san}, refuses a client without a certificate (${probe.ending})`);

  assert.equal(await exchange(`${ip}:${port}`, undefined), 'UNAVAILABLE', 'a plaintext gRPC client was served');
  log(`${target}: a plaintext gRPC client is refused`);

  const files = { credentialBundle: proxyBundle, trustBundle: env.CHECK_TLS_CA ?? '/certs/ca.pem', id };
  assert.equal(await exchange(target, files), 'response', 'the proxy identity was not served');
  const fake = await impostor(env.CHECK_IMPOSTOR_BUNDLE ?? '/certs/proxy-ingress.pem', ca);
  try {
    assert.equal(await exchange(fake.address, files), 'UNAVAILABLE', 'the proxy accepted an ext_proc server with another identity');
    assert.equal(fake.calls(), 0, 'a stream reached the impostor');
  } finally {
    fake.close();
  }
  log(`proxy → ext_proc: ${id} reached with the proxy's bundle; a server from the same CA without that identity refused`);

  const after = await tlsCounts(admin);
  assert.ok(after.refused_handshake >= before.refused_handshake + 2, `extproc counted ${after.refused_handshake - before.refused_handshake} refused handshakes, expected 2`);
  assert.ok(after.accepted > before.accepted, 'extproc counted no accepted connection');
}
