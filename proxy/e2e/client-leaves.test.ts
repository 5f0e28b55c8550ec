/**
 * End to end: a client that hangs up while the proxy waits for ext_proc's answer. The proxy cancels the ext_proc
 * stream (the server sees it closed), its active-stream gauge returns to 0, the access log records 499, and the
 * request never reaches a worker.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import http from 'node:http';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { ERRORS } from '../http/errors.js';
import { accessLine, client, hostOf, proxyStats, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';

let worker: Upstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('a client that leaves while ext_proc answers', () => {
  before(async () => {
    worker = await startUpstream((_req, res) => res.end('ok'));
    // Requests whose id starts with "hang" are never answered: the proxy waits (for up to a minute).
    ep = await startScriptedExtProc((m) => (m.headers['x-request-id']?.startsWith('hang') ? 'ignore' : routeTo(worker.address)));
    proxy = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--actor-cache', 'off', '--extproc-message-timeout-ms', '60000'] });
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await proxy?.stop();
    await ep?.close();
    await worker?.close();
  });

  test('a client that leaves while the proxy waits on ext_proc: stream cancelled, active back to 0, logged 499', async () => {
    const closedBefore = ep.closedByClient;
    const url = new URL(proxy.ingress);
    const req = http.request({ host: url.hostname, port: url.port, path: '/wait', headers: { host: hostOf('patient'), 'x-request-id': 'hang-1' }, agent: false });
    req.on('error', () => undefined); // we hang up ourselves
    req.end();
    await waitFor(() => ep.seen.some((m) => m.headers['x-request-id'] === 'hang-1'), 10_000, 'ext_proc to receive the request');
    assert.equal(ep.active, 1);
    assert.equal((await proxyStats(proxy)).extproc.active, 1, 'the proxy is waiting on the stream');
    req.destroy();

    // One stream, but the scripted server may count both its half-close and its cancellation: "moved" is exact enough.
    await waitFor(() => ep.closedByClient > closedBefore && ep.active === 0, 10_000, 'the proxy to cancel the stream');
    const line = await accessLine(proxy, 'hang-1');
    assert.equal(line.status, ERRORS.DOWNSTREAM_CLOSED.status);
    const s = await proxyStats(proxy);
    assert.equal(s.extproc.active, 0);
    assert.equal(s.extproc.streams, 1);
    assert.equal(s.extproc.timeouts, 0, 'cancelled, not waited out');
    assert.deepEqual(s.requests, { total: 1, byStatus: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 1, '5xx': 0 }, inFlight: 0 });
    assert.equal(worker.requests.length, 0, 'the request never reached a worker');
  });
});
