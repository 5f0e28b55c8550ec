/**
 * A classic HTTP/2 CONNECT (no `:protocol`, so no `:path`) once ended the proxy process from the request path. It
 * is a request like any other: answered as an authority-form target is on HTTP/1.1 (refused before any filter),
 * on h2c and on the HTTPS listener alike, and the proxy goes on serving; nothing is left in flight.
 */
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';

const HOST = actorHost('connect-actor');

let ca: TestCa;
let up: Upstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;

describe('a classic HTTP/2 CONNECT', () => {
  before(async () => {
    ca = await createTestCa();
    const cert = await ca.issue('server');
    up = await startUpstream((_req, res) => res.end('ok'));
    ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
    proxy = await startTestProxy({
      mode: 'in-process',
      args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--tls-listen', '127.0.0.1:0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile],
    });
  });

  after(async () => {
    await proxy?.stop();
    await ep?.close();
    await up?.close();
    await ca?.remove();
  });

  interface Answer {
    readonly status: number | undefined;
    readonly requestId: string | undefined;
    readonly reset: number | undefined;
  }

  /** One stream on a fresh session; its answer (status and request id), or the reset code it ended with. */
  function h2Request(authority: string, headers: http2.OutgoingHttpHeaders, ca?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(authority, ca === undefined ? {} : { ca, servername: 'localhost' });
      session.on('error', reject);
      const stream = session.request(headers, { endStream: headers[':method'] !== 'CONNECT' });
      let status: number | undefined;
      let requestId: string | undefined;
      stream.on('response', (h) => {
        status = Number(h[':status']);
        requestId = h['x-request-id'] as string | undefined;
      });
      stream.on('error', () => undefined);
      stream.resume();
      stream.on('close', () => {
        resolve({ status, requestId, reset: stream.rstCode });
        session.close();
      });
      if (headers[':method'] === 'CONNECT') stream.end();
    });
  }

  async function stats(): Promise<{ requests: { inFlight: number }; internalErrors: Record<string, number> }> {
    const r = await fetch(`${proxy.admin}/stats`);
    return (await r.json()) as { requests: { inFlight: number }; internalErrors: Record<string, number> };
  }

  async function stillServing(base: string, ca?: string): Promise<void> {
    const ok = await h2Request(base, { ':method': 'GET', ':path': '/after', ':authority': HOST }, ca);
    assert.equal(ok.status, 200, 'the proxy still serves after the CONNECT');
  }

  for (const listener of ['h2c', 'https'] as const) {
    test(`${listener}: a classic CONNECT (no :protocol, no :path) is refused as an authority-form target; the proxy lives`, async () => {
      const base = listener === 'h2c' ? proxy.ingress : `https://${proxy.addresses.tls}`;
      const caPem = listener === 'h2c' ? undefined : readFileSync(ca.caFile, 'utf8');
      for (const authority of ['127.0.0.1:9', 'localhost:443', HOST]) {
        const answer = await h2Request(base, { ':method': 'CONNECT', ':authority': authority }, caPem);
        assert.ok(answer.status === 404 || answer.status === 400, `CONNECT ${authority}: a refusal, got ${answer.status} (reset ${answer.reset})`);
        assert.match(answer.requestId ?? '', /\S/, 'the refusal carries the request id');
      }
      await stillServing(base, caPem);
      await waitFor(async () => (await stats()).requests.inFlight === 0, 5000, 'nothing left in flight');
      const s = await stats();
      assert.equal(Object.values(s.internalErrors).reduce((a, b) => a + b, 0), 0, 'a refusal, not a contained error');
      assert.equal(up.requests.some((r) => r.method === 'CONNECT'), false, 'nothing reached the worker');
    });
  }
});
