/**
 * The `h2` phase of the compose check, run inside the proxy container: one request over HTTP/2 with TLS to the
 * proxy's HTTPS listener (the certificate must verify against the deployment's CA for CHECK_H2_NAME and ALPN must
 * pick h2), and one gRPC call (actoredge.demo.Echo/Echo, over h2c on the cleartext ingress) to an actor.
 *
 * Environment: CHECK_H2_TLS (https://proxy-control:8443), CHECK_H2_NAME (proxy-control), CHECK_TLS_CA
 * (/certs/ca.pem), CHECK_GRPC_TARGET (proxy-control:8080).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';

const TIMEOUT_MS = 15000;

interface EchoReply {
  readonly actor: string;
  readonly atespace: string;
  readonly message: string;
}

type EchoClient = grpc.Client & { Echo(req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, reply: EchoReply) => void): void };

/** GET `path` over HTTP/2 with TLS; the status, body and negotiated protocol. */
function getOverTls(url: string, servername: string, ca: Buffer, authority: string, path: string): Promise<{ status: number; body: string; alpn: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, { ca, servername });
    const timer = setTimeout(() => session.destroy(new Error(`no answer from ${url} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    session.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const req = session.request({ ':method': 'GET', ':path': path, ':authority': authority });
    let status = 0;
    let body = '';
    req.on('response', (headers) => (status = Number(headers[':status'])));
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.once('error', reject);
    req.once('end', () => {
      clearTimeout(timer);
      const alpn = String(session.alpnProtocol);
      session.close();
      resolve({ status, body, alpn });
    });
  });
}

function echo(target: string, authority: string, message: string): Promise<EchoReply> {
  const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), 'actoredge.demo.Echo');
  const client = new Ctor(target, grpc.credentials.createInsecure(), { 'grpc.default_authority': authority }) as unknown as EchoClient;
  return new Promise<EchoReply>((resolve, reject) => {
    client.Echo({ message }, { deadline: Date.now() + TIMEOUT_MS }, (err, reply) => (err ? reject(err) : resolve(reply)));
  }).finally(() => client.close());
}

export async function h2Phase(suffix: string, log: (text: string) => void): Promise<void> {
  const env = process.env;
  const url = env.CHECK_H2_TLS ?? 'https://proxy-control:8443';
  const name = env.CHECK_H2_NAME ?? 'proxy-control';
  const ca = readFileSync(env.CHECK_TLS_CA ?? '/certs/ca.pem');
  const host = `actor-000.demo.${suffix}`;
  const a = await getOverTls(url, name, ca, host, '/check');
  assert.equal(a.alpn, 'h2', `ALPN picked ${a.alpn}, not h2`);
  assert.equal(a.status, 200, `GET ${host} over h2 with TLS → ${a.status} ${a.body}`);
  assert.equal((JSON.parse(a.body) as { actor: string }).actor, 'actor-000');
  log(`${url}: HTTP/2 with TLS (certificate valid for ${name}), ${host} answered 200`);

  const target = env.CHECK_GRPC_TARGET ?? 'proxy-control:8080';
  const grpcHost = `actor-001.demo.${suffix}`;
  const reply = await echo(target, grpcHost, 'compose');
  assert.equal(reply.actor, 'actor-001');
  assert.equal(reply.atespace, 'demo');
  assert.equal(reply.message, 'compose');
  log(`${target}: gRPC actoredge.demo.Echo/Echo to ${grpcHost} answered by the actor`);
}
