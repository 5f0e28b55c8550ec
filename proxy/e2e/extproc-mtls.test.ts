/**
 * End to end: the proxy → extproc hop over mTLS (real TLS; both in the test's process). extproc serves the ext_proc
 * listener with its SPIFFE identity and accepts only the proxy's; the proxy accepts only extproc's.
 *
 * - a miss goes proxy → extproc → control plane → worker and answers 200; extproc counted the accepted handshake;
 * - a proxy that expects another ext_proc identity refuses this extproc: 500, the refusal logged with what
 *   extproc presented; the stream never reached extproc;
 * - a proxy presenting another identity is refused by extproc (counted as refused_identity): 500;
 * - a proxy without the hop's TLS flags warns at start that the hop is plaintext, and extproc refuses it.
 * Readiness follows the hop: the proxy's `/ready` health check runs on the ext_proc channel itself, so it is 200
 * over mTLS, and 503 (saying why) wherever the streams would be refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testPki, type TestPki } from '../../lib/tls/testing/pki.js';
import { request } from 'undici';
import { waitFor } from '../../lib/testing/wait.js';
import { actorName, adminJson, client, send, STACK_TIMEOUTS, startExtproc, startStub, type Extproc, type Stub } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

interface ExtprocTls {
  tls: { accepted: number; refused_handshake: number; refused_identity: number; refused_alpn: number };
  streams: { total: number };
}

let pki: TestPki;
let stub: Stub;
let extproc: Extproc;
const proxies: InProcessTestProxy[] = [];

function hopArgs(bundle: string, ...more: string[]): string[] {
  return ['--extproc-credential-bundle', bundle, '--extproc-trust-bundle', pki.files.ca, ...more];
}

/**
 * A miss whose ext_proc stream is refused (UNAVAILABLE) is retried on fresh streams within the re-run budget before
 * its 500: a short budget, so the refusal tests do not wait out the 3 s default (the connect timeout must be below it).
 */
const SHORT_BUDGET = ['--rerun-budget-ms', '500', '--connect-timeout-ms', '250'];

async function proxyWith(args: string[]): Promise<InProcessTestProxy> {
  const p = await startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, ...SHORT_BUDGET, ...args] });
  proxies.push(p);
  return p;
}

const extprocStats = (): Promise<ExtprocTls> => adminJson<ExtprocTls>(extproc.admin, '/stats');

/** The proxy's `/ready` as JSON, once its first health check has answered. */
async function readiness(proxy: InProcessTestProxy): Promise<{ status: number; state: string; reasons: string[] }> {
  const res = await request(`${proxy.admin}/ready`, { dispatcher: client, headers: { accept: 'application/json' } });
  const doc = (await res.body.json()) as { state: string; reasons: string[] };
  return { status: res.statusCode, ...doc };
}

/** Waits for `/ready` to answer `status` (the health check runs every second); returns that answer. */
async function readyBecomes(proxy: InProcessTestProxy, status: number): Promise<{ status: number; state: string; reasons: string[] }> {
  let last = await readiness(proxy);
  await waitFor(async () => (last = await readiness(proxy)).status === status, 15_000, `/ready ${status}`);
  return last;
}

describe('the proxy to extproc hop over mTLS', () => {
  before(async () => {
    pki = await testPki();
    stub = await startStub({ workers: 2, actors: 6 });
    extproc = await startExtproc(stub, ['--tls-credential-bundle', pki.files.extproc, '--tls-client-ca', pki.files.ca]);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await Promise.all([...proxies, extproc?.component, stub?.component].filter((c) => c !== undefined).map((c) => c.stop()));
    await pki?.close();
  });

  test('over mTLS a miss reaches the actor through extproc', async () => {
    const proxy = await proxyWith(hopArgs(pki.files.proxy));
    const r = await send(proxy, actorName(0));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.app?.actor, actorName(0));
    const s = await extprocStats();
    assert.ok(s.tls.accepted >= 1, JSON.stringify(s.tls));
    const started = proxy.logs().find((l) => l.msg === 'mTLS to ext_proc');
    assert.deepEqual(started?.identity, [pki.ids.proxy]);
    // The readiness check goes over the same mTLS channel: ready.
    const ready = await readyBecomes(proxy, 200);
    assert.deepEqual([ready.state, ready.reasons], ['LIVE', []]);
    // Its certificates announce their expiry: the 30-day development bundle comes first.
    const metrics = await (await fetch(`${proxy.admin}/metrics`)).text();
    const seconds = Number(/^actor_edge_proxy_tls_certificate_expiry_seconds (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(seconds > 29 * 86400 && seconds <= 30 * 86400, String(seconds));
  });

  test('a proxy that expects another ext_proc identity refuses this extproc: 500, logged', async () => {
    const proxy = await proxyWith(hopArgs(pki.files.proxy, '--extproc-spiffe-id', 'spiffe://cluster.local/ns/actor-edge/sa/someone-else'));
    const before = (await extprocStats()).streams.total;
    const r = await send(proxy, actorName(1));
    assert.equal(r.status, 500, r.text);
    await waitFor(() => proxy.logs().some((l) => l.msg === 'ext_proc server refused (identity, chain or handshake)'), 5000, 'the refusal log line');
    const refused = proxy.logs().find((l) => l.msg === 'ext_proc server refused (identity, chain or handshake)');
    assert.equal(refused?.presented, `URI:${pki.ids.extproc}`);
    assert.equal((await extprocStats()).streams.total, before, 'no stream reached extproc');
    const ready = await readyBecomes(proxy, 503);
    assert.equal(ready.state, 'NOT_READY');
    assert.match(ready.reasons.join('\n'), /^ext_proc 127\.0\.0\.1:\d+: /, 'the reason names the ext_proc server');
  });

  test('a proxy presenting another identity is refused by extproc: 500, counted as refused_identity', async () => {
    const before = (await extprocStats()).tls;
    const proxy = await proxyWith(hopArgs(pki.wrongProxy));
    const r = await send(proxy, actorName(2));
    assert.equal(r.status, 500, r.text);
    const after = (await extprocStats()).tls;
    assert.ok(after.refused_identity > before.refused_identity, JSON.stringify({ before, after }));
    assert.equal(after.accepted, before.accepted);
    assert.equal((await readyBecomes(proxy, 503)).state, 'NOT_READY', 'extproc refuses its health checks too');
  });

  test('a proxy without the hop\'s TLS flags warns that it is plaintext, and extproc refuses it', async () => {
    const proxy = await proxyWith([]);
    const warning = proxy.logs().find((l) => String(l.msg).startsWith('ext_proc hop is plaintext'));
    assert.equal(warning?.level, 40);
    const r = await send(proxy, actorName(3));
    assert.equal(r.status, 500, r.text);
    assert.equal((await readyBecomes(proxy, 503)).state, 'NOT_READY', 'a plaintext health check is refused too');
  });
});
