/**
 * End to end with mTLS on every hop (real TLS; the stub, extproc and proxy in the test's process): apiserver-stub
 * serves ateapi.Control over TLS with client certificates and its workers terminate mTLS; extproc reaches the
 * control plane over TLS 1.3 with its client certificate; the proxy reaches the workers with its client
 * certificate and checks them by SPIFFE prefix.
 *
 * - requests flow (200), and the workers count the proxy's accepted handshakes;
 * - a gRPC call (HTTP/2 client) reaches the worker's demo gRPC service over mTLS with ALPN `h2`;
 * - the proxy's credential bundle is rotated while requests flow: every request answers 200;
 * - a proxy whose prefix no worker matches answers 502 PROXY_ERR_UPSTREAM_IDENTITY once per request (one
 *   ResumeActor per request: never a re-run into the same worker), logging what the worker presented;
 * - a proxy presenting another identity is refused by the workers (counted in the stub's /stats since the last
 *   reset, and in its /metrics for the stub's lifetime);
 * - a missing credential bundle stops the proxy at start with a message naming the file.
 * Needs processes: the missing bundle must end `actor-edge proxy` at start with exit code 2 (that proxy only).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';
import { replaceFile, testPki, type TestPki } from '../../lib/tls/testing/pki.js';
import { accessLine, actorName, adminJson, client, hostOf, proxyStats, resetStats, resumeCalls, send, startStack, type Stack, type Stub } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

interface WorkerTlsStats {
  workerTls: { accepted: number; refusedHandshake: number; refusedIdentity: number };
}

let pki: TestPki;
let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;
let proxyBundle: string;

function upstreamTlsArgs(bundle: string, ...more: string[]): string[] {
  return ['--upstream-credential-bundle', bundle, '--upstream-trust-bundle', pki.files.ca, '--upstream-tls-watch-ms', '50', ...more];
}

before(async () => {
  pki = await testPki();
  proxyBundle = path.join(pki.dir, 'e2e-proxy.pem');
  await copyFile(pki.files.proxy, proxyBundle);
  stack = await startStack({
    stub: {
      workers: 3,
      capacity: 8,
      actors: 20,
      args: [
        '--tls-credential-bundle', pki.files.controlPlane,
        '--tls-client-ca', pki.files.ca,
        '--worker-tls-credential-bundle', pki.files.worker,
        '--worker-tls-client-ca', pki.files.ca,
        '--worker-tls-client-identity', pki.ids.proxy,
      ],
    },
    extprocArgs: ['--apiserver-ca', pki.files.ca, '--apiserver-credential-bundle', pki.files.extproc, '--apiserver-server-name', 'localhost'],
    proxyArgs: upstreamTlsArgs(proxyBundle),
  });
  ({ stub, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
  await pki?.close();
});

const workerTls = async (): Promise<WorkerTlsStats['workerTls']> => (await adminJson<WorkerTlsStats>(stub.admin, '/stats')).workerTls;

test('mTLS on every hop: requests answer 200 and the workers accepted the proxy identity', async () => {
  for (let i = 0; i < 6; i++) {
    const r = await send(proxy, actorName(i));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.app?.actor, actorName(i));
  }
  const t = await workerTls();
  assert.ok(t.accepted >= 1, JSON.stringify(t));
  assert.equal(t.refusedIdentity, 0);
  assert.equal(t.refusedHandshake, 0);
});

test('gRPC over mTLS: an Echo call reaches the actor on its worker over HTTP/2 (ALPN h2)', async () => {
  const actor = actorName(5);
  const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), 'actoredge.demo.Echo');
  const c = new Ctor(proxy.address, grpc.credentials.createInsecure(), { 'grpc.default_authority': hostOf(actor) });
  try {
    const before = (await workerTls()).accepted;
    const reply = await new Promise<{ actor: string; message: string }>((resolve, reject) =>
      (c as unknown as { Echo: (req: object, cb: (err: Error | null, r: { actor: string; message: string }) => void) => void }).Echo({ message: 'over mTLS' }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    // The demo service answers only over HTTP/2: an HTTP/1.1 upstream would not produce a gRPC reply.
    assert.equal(reply.message, 'over mTLS');
    assert.equal(reply.actor, actor);
    assert.ok((await workerTls()).accepted > before, 'a new mTLS handshake for the HTTP/2 session');
  } finally {
    c.close();
  }
});

test('rotating the proxy credential bundle while requests flow: every request answers 200', async () => {
  const before = (await proxyStats(proxy)).upstream as unknown as { tlsReloads: number };
  let rotated = false;
  let after = 0;
  const statuses: number[] = [];
  const loop = async (n: number): Promise<void> => {
    // Each loop keeps sending until the rotation is seen and 20 more requests have gone through.
    for (let i = 0; !rotated || after < 20; i++) {
      const r = await send(proxy, actorName((n * 7 + i) % 20));
      statuses.push(r.status);
      if (rotated) after++;
    }
  };
  const flows = [0, 1, 2, 3].map(loop);
  await waitFor(() => statuses.length >= 20, 10_000, 'requests before the rotation');
  await replaceFile(pki.proxyRotated, proxyBundle);
  await waitFor(async () => ((await proxyStats(proxy)).upstream as unknown as { tlsReloads: number }).tlsReloads > before.tlsReloads, 10_000, 'the reload');
  rotated = true;
  await Promise.all(flows);
  assert.ok(statuses.length >= 40);
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
  );
  const up = (await proxyStats(proxy)).upstream as unknown as { tlsReloadErrors: number };
  assert.equal(up.tlsReloadErrors, 0);
});

test('a worker outside the SPIFFE prefix: 502 PROXY_ERR_UPSTREAM_IDENTITY, one ResumeActor per request, what it presented logged', async () => {
  const strict = await stack.addProxy(upstreamTlsArgs(pki.files.proxy, '--upstream-spiffe-prefix', 'spiffe://elsewhere.example/'));
  await resetStats(stub.admin);
  for (let i = 0; i < 3; i++) {
    const r = await send(strict, actorName(10), { requestId: `identity-${i}` });
    assert.equal(r.status, 502, r.text);
    assert.match(r.text, /upstream identity verification failed/);
  }
  assert.equal(await resumeCalls(stub), 3, 'one slow-path resolution per request, no re-run');
  const line = await accessLine(strict, 'identity-0');
  assert.equal(line.error, 'PROXY_ERR_UPSTREAM_IDENTITY');
  const warn = strict.logs().find((l) => l.msg === 'upstream worker failed identity verification');
  assert.equal(warn?.presented, `URI:${pki.ids.worker}`);
  const s = (await proxyStats(strict)) as unknown as { upstream: { identityFailures: number }; cache: { evictions: Record<string, number> } };
  assert.equal(s.upstream.identityFailures, 3);
  assert.equal(s.cache.evictions.identity, 0, 'a miss-routed request has no binding to evict');
});

test('a proxy presenting another identity is refused by the workers, and the stub counts it', async () => {
  const intruder = await stack.addProxy([...upstreamTlsArgs(pki.wrongProxy), '--max-reruns', '0']);
  const before = await workerTls();
  const r = await send(intruder, actorName(11));
  assert.ok(r.status >= 500, `${r.status} ${r.text}`);
  await waitFor(async () => (await workerTls()).refusedIdentity > before.refusedIdentity, 5000, 'the refused identity');
  const refusedMetric = async (): Promise<number> => {
    const text = await (await fetch(`${stub.admin}/metrics`)).text();
    return Number(/^actor_edge_apiserver_stub_worker_tls_handshakes_total\{outcome="refused_identity"\} (\d+)$/m.exec(text)?.[1] ?? 'NaN');
  };
  const lifetime = await refusedMetric();
  assert.ok(lifetime >= 1, `metric: ${lifetime}`);
  await resetStats(stub.admin);
  assert.equal((await workerTls()).refusedIdentity, 0, '/stats counts from the reset');
  assert.ok((await refusedMetric()) >= lifetime, '/metrics keeps the lifetime count');
});

test('a missing credential bundle stops the proxy at start, naming the file', async () => {
  await assert.rejects(
    startTestProxy({ args: upstreamTlsArgs('/nonexistent/proxy.pem'), readyTimeoutMs: 10_000 }),
    (err: Error) =>
      /exited \(exit code 2\)/.test(err.message) &&
      /--upstream-credential-bundle "\/nonexistent\/proxy.pem" cannot be read \(ENOENT\)/.test(err.message),
  );
});
