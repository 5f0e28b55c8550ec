/**
 * End to end, a real proxy in the test's process with mTLS to the workers and its default timeouts: a worker that
 * accepts TCP and never answers the TLS handshake — how a dead, silent node usually fails — is a connect failure
 * well within the re-run budget, so the request is re-run through ext_proc to a worker that answers (it used to wait
 * out a 5 s TLS connect timeout, longer than the 3 s budget, and answer 503 with no re-run). Requests waiting on
 * such a worker all at once cost one connect timeout: it marks the address down (outlier detection) and the others
 * re-run at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { actorHost } from '../../lib/testing/actors.js';
import { boundAddress } from '../../lib/address.js';
import { testPki, type TestPki } from '../../lib/tls/testing/pki.js';
import { getJson, routeTo, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import type { ProxyStatsBlock } from '../ops/stats.js';

let pki: TestPki;
let silent: net.Server;
const held = new Set<net.Socket>();
let worker: https.Server;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
/** ext_proc routes this many more streams to the silent worker, then every stream to the one that answers. */
let silentStreams = 1;

describe('a worker that never answers the TLS handshake', () => {
  before(async () => {
    pki = await testPki();
    silent = net.createServer((socket) => {
      held.add(socket); // accepted, and never a byte back
      socket.on('error', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const bundle = await readFile(pki.files.worker);
    worker = https.createServer({ cert: bundle, key: bundle }, (_req, res) => res.end('from the worker that answers'));
    worker.listen(0, '127.0.0.1');
    await once(worker, 'listening');
    const [toSilent, toWorker] = [boundAddress(silent), boundAddress(worker)];
    ep = await startScriptedExtProc(() => routeTo(silentStreams-- > 0 ? toSilent : toWorker, '443'));
    proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      args: ['--actor-cache', 'off', '--upstream-credential-bundle', pki.files.proxy, '--upstream-trust-bundle', pki.files.ca],
    });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
    for (const s of held) s.destroy();
    silent?.close();
    worker?.close();
  });

  test('a worker that never completes the TLS handshake is a connect failure within the re-run budget: re-run, 200', async () => {
    const res = await fetch(`${proxy.ingress}/`, { headers: { host: actorHost('silent') } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'from the worker that answers');
    const stats = (await getJson(`${proxy.admin}/stats`)) as unknown as ProxyStatsBlock;
    assert.equal(stats.upstream.connectFailures, 1, 'the silent worker counted as a failed connect');
    assert.equal(stats.reruns.connect, 1, 'and the request re-run');
    assert.equal(ep.streams, 2, 'through ext_proc again');
  });

  test('requests waiting on a silent worker all at once cost one connect timeout: it marks the address down and the rest re-run at once', async () => {
    const before = (await getJson(`${proxy.admin}/stats`)) as unknown as ProxyStatsBlock;
    const streamsBefore = ep.streams;
    silentStreams = 5;
    const answers = await Promise.all(Array.from({ length: 5 }, async (_, i) => {
      const res = await fetch(`${proxy.ingress}/`, { method: 'POST', body: `n=${i}`, headers: { host: actorHost('silent') } });
      return { status: res.status, text: await res.text() };
    }));
    for (const a of answers) assert.deepEqual(a, { status: 200, text: 'from the worker that answers' });
    const s = (await getJson(`${proxy.admin}/stats`)) as unknown as ProxyStatsBlock;
    assert.equal(s.upstream.connectFailures - before.upstream.connectFailures, 1, 'one connect timed out; the other four never waited for theirs');
    assert.equal(s.upstream.outliers.ejections.timeout - before.upstream.outliers.ejections.timeout, 1);
    assert.equal(s.upstream.outliers.failedFast - before.upstream.outliers.failedFast, 4);
    assert.equal(s.reruns.connect - before.reruns.connect, 5);
    assert.equal(ep.streams - streamsBefore, 10, 'each request asked ext_proc again');
  });
});
