/**
 * End to end, with curl as the client of an HTTPS proxy: `curl -p -x https://<connect TLS listener>
 * --proxy-cacert <CA> http://<actor host>/` opens a CONNECT tunnel over TLS (the serving certificate of
 * `--tls-cert`/`--tls-key`), whose bytes are a new connection into the ingress, routed like a direct request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { actorName, adminJson, client, hostOf, startStack, type DemoAnswer, type Stack } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';
import type { TunnelStatsBlock } from '../ops/tunnel-stats.js';

const run = promisify(execFile);

let ca: TestCa;
let stack: Stack;
let proxy: InProcessTestProxy;
let connectTls: string;

describe('CONNECT tunnels over TLS, with curl', () => {
  before(async () => {
    ca = await createTestCa();
    const cert = await ca.issue('connect');
    stack = await startStack({ stub: { workers: 2, capacity: 8, actors: 4 }, proxyArgs: ['--connect-tls-listen', '127.0.0.1:0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile] });
    proxy = stack.proxy;
    connectTls = proxy.addresses.connectTls as string;
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
    await ca?.remove();
  });

  test('curl -p -x https://: a request inside a CONNECT tunnel over TLS reaches its actor', async () => {
    const actor = actorName(1);
    const port = connectTls.slice(connectTls.lastIndexOf(':') + 1);
    const out = await run('curl', ['-sS', '-p', '-x', `https://localhost:${port}`, '--proxy-cacert', ca.caFile, '-H', 'x-request-id: tls-tunnel-1', `http://${hostOf(actor)}/inside`]);
    const answer = JSON.parse(out.stdout) as DemoAnswer;
    assert.deepEqual([answer.actor, answer.path], [actor, '/inside']);
    const logs = (): Record<string, unknown>[] => proxy.logs();
    await waitFor(() => logs().some((l) => l.msg === 'access' && l.requestId === 'tls-tunnel-1'), 5000, 'the inner access line');
    await waitFor(() => logs().some((l) => l.msg === 'access' && l.method === 'CONNECT' && l.status === 200 && (l.tunnel as { kind?: string } | undefined)?.kind === 'connect'), 10_000, 'the tunnel log line');
    const t = (await adminJson<{ tunnels: TunnelStatsBlock }>(proxy.admin, '/stats')).tunnels;
    assert.equal(t.connect.total, 1);
    assert.equal(t.connect.active, 0);
  });

  test('a plaintext CONNECT on the TLS listener gets no tunnel', async () => {
    const port = connectTls.slice(connectTls.lastIndexOf(':') + 1);
    await assert.rejects(run('curl', ['-sS', '-p', '-x', `http://127.0.0.1:${port}`, '--max-time', '5', `http://${hostOf(actorName(1))}/`]));
  });
});
