/**
 * The client-facing 421 on a real HTTPS listener (`--misdirected-421 on`): on a TLS connection opened for one actor
 * (its SNI), a request for another actor — an HTTP/2 client coalescing connections under one wildcard
 * certificate, or an HTTP/1.1 Host that is not the SNI — is answered 421 before any filter runs: no ext_proc
 * stream, nothing sent upstream, no stale header. The same request on a connection of its own is served; a client
 * that sent no SNI is served; without the flag the coalesced request is served.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import { actorHost } from '../../lib/testing/actors.js';
import { STALE_HEADER } from '../../lib/wire-contract.js';
import { routeTo, startScriptedExtProc, startTestProxy, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';
import type { RunningProxy } from '../proxy-process.js';

const A = actorHost('sni-a');
const B = actorHost('sni-b');
let ca: TestCa;
let up: Upstream;
let ep: ScriptedExtProc;
let strict: RunningProxy;
let lenient: RunningProxy;

before(async () => {
  ca = await createTestCa();
  const { certFile, keyFile } = await ca.issue('serving');
  up = await startUpstream((_req, res) => res.end('ok'));
  ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
  const tls = ['--extproc', ep.address, '--tls-listen', '127.0.0.1:0', '--tls-cert', certFile, '--tls-key', keyFile];
  strict = await startTestProxy([...tls, '--misdirected-421', 'on']);
  lenient = await startTestProxy(tls);
});

after(async () => {
  await strict?.close();
  await lenient?.close();
  await ep?.close();
  await up?.close();
  await ca?.remove();
});

const port = (p: RunningProxy): number => Number((p.tls as string).slice((p.tls as string).lastIndexOf(':') + 1));

interface H2Answer {
  readonly status: number;
  readonly headers: http2.IncomingHttpHeaders;
  readonly text: string;
}

function h2Get(session: http2.ClientHttp2Session, authority: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'GET', ':path': '/', ':authority': authority });
    let text = '';
    let headers: http2.IncomingHttpHeaders = {};
    stream.setEncoding('utf8');
    stream.on('response', (h) => (headers = h));
    stream.on('data', (c: string) => (text += c));
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, text }));
    stream.on('error', reject);
  });
}

function h2Session(p: RunningProxy, servername: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port(p)}`, { servername, rejectUnauthorized: false });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

function h1Get(p: RunningProxy, host: string, servername: string | undefined): Promise<{ status: number; text: string; stale: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port: port(p), path: '/', headers: { host }, rejectUnauthorized: false, agent: false, ...(servername === undefined ? {} : { servername }) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, stale: res.headers[STALE_HEADER] }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('HTTP/2 coalescing: another actor on a connection opened for A is answered 421 before any filter; on its own connection it is served', async () => {
  const session = await h2Session(strict, A);
  try {
    assert.equal((await h2Get(session, A)).status, 200);
    const streams = ep.streams;
    const forwarded = up.requests.length;
    const misdirected = await h2Get(session, B);
    assert.equal(misdirected.status, 421);
    assert.equal(misdirected.text, 'misdirected request: open a connection for this authority\n');
    assert.equal(misdirected.headers[STALE_HEADER], undefined, 'the client-facing 421 never carries the worker stale signal');
    assert.equal(ep.streams, streams, 'no ext_proc stream for a misdirected request');
    assert.equal(up.requests.length, forwarded, 'nothing forwarded upstream');
    // The same connection still serves its own authority (with a port, in any case).
    assert.equal((await h2Get(session, `${A.toUpperCase()}:443`)).status, 200);
  } finally {
    session.close();
  }
  const own = await h2Session(strict, B);
  try {
    const retried = await h2Get(own, B);
    assert.equal(retried.status, 200);
    assert.equal(retried.text, 'ok');
  } finally {
    own.close();
  }
});

test('HTTP/1.1 over TLS: a Host that is not the SNI is 421; no SNI (connected by address) is served', async () => {
  const wrong = await h1Get(strict, B, A);
  assert.equal(wrong.status, 421);
  assert.equal(wrong.stale, undefined);
  assert.equal((await h1Get(strict, A, A)).status, 200);
  // node sends no SNI for an IP address servername (RFC 6066 forbids it): the client chose no replica by name.
  assert.equal((await h1Get(strict, B, undefined)).status, 200);
});

test('without --misdirected-421 the coalesced request is served', async () => {
  const session = await h2Session(lenient, A);
  try {
    const answer = await h2Get(session, B);
    assert.equal(answer.status, 200);
    assert.equal(answer.text, 'ok');
  } finally {
    session.close();
  }
});
