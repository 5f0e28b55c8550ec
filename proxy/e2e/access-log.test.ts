/**
 * End to end: the access log is its own stream — a file here (not the component log, whose LOG_LEVEL it ignores:
 * `scripts/start-stack.test.ts` runs the stack at LOG_LEVEL=warn), reopened on
 * SIGUSR1 after a rotation, one line per request with the documented field set (TLS version and SNI included),
 * one per state-changing admin call with the caller's address; request ids are the proxy's own unless the peer is
 * trusted, and every response (a local reply, a refusal at the edge) carries the request's id; with `--workers 2`
 * both processes append whole lines to the same file.
 * Needs processes: SIGUSR1 reopens the file, and `--workers 2` appends from two processes (the file is the product's).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../../lib/testing/wait.js';
import { actorName, adminJson, client, hostOf, send, startStack, type Extproc, type Stack, STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type TestProxy } from '../testing/proxy.js';
import { rawExchange } from '../testing/raw-exchange.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';

let stack: Stack<TestProxy>;
let extproc: Extproc;
let proxy: TestProxy;
let ca: TestCa;
let dir: string;
let logFile: string;

/** The fields every request line has, in this order (docs/operating.md), `cache` and `extprocMs` from the stages. */
const REQUEST_FIELDS = [
  'msg', 'time', 'pid', 'requestId', 'traceId', 'client', 'method', 'authority', 'path', 'protocol', 'status', 'durationMs',
  'bytesIn', 'bytesOut', 'upstream', 'upstreamMs', 'attempts', 'routeSource', 'cache', 'extprocMs', 'userAgent', 'tls', 'upgrade',
  'tunnel', 'error', 'details', 'aborted',
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-access-'));
  logFile = path.join(dir, 'logs', 'access.log');
  ca = await createTestCa();
  const { certFile, keyFile } = await ca.issue('localhost');
  stack = await startStack({
    mode: 'process',
    stub: { workers: 2, capacity: 4, actors: 6 },
    proxyArgs: ['--request-id-trusted', 'auto', '--access-log', logFile, '--tls-listen', '127.0.0.1:0', '--tls-cert', certFile, '--tls-key', keyFile],
  });
  ({ extproc, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
  await ca?.remove();
  await rm(dir, { recursive: true, force: true });
});

async function lines(file = logFile): Promise<Record<string, unknown>[]> {
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function lineOf(requestId: string, file = logFile): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(async () => (found = (await lines(file)).find((l) => l.requestId === requestId)) !== undefined, 5000, `the access line of ${requestId}`);
  return found as Record<string, unknown>;
}

test('every request has its line in the file, with the whole field set; a client id is replaced and returned', async () => {
  const a = await send(proxy, actorName(0), { method: 'POST', body: 'hello', path: '/p?q=1', headers: { 'user-agent': 'access-test/1', 'x-request-id': 'forged-by-client' } });
  assert.equal(a.status, 200);
  const id = String(a.headers['x-request-id']);
  assert.match(id, UUID, 'the proxy made its own id');
  assert.equal(a.app?.requestId, id, 'the worker got the same id');
  const line = await lineOf(id);
  assert.deepEqual(Object.keys(line), REQUEST_FIELDS);
  assert.equal(line.msg, 'access');
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(line.client, '127.0.0.1');
  assert.equal(line.userAgent, 'access-test/1');
  assert.equal(line.method, 'POST');
  assert.equal(line.path, '/p?q=1');
  assert.equal(line.bytesIn, 5);
  assert.equal(line.bytesOut, Buffer.byteLength(a.text));
  assert.equal(typeof line.upstreamMs, 'number');
  assert.ok((line.upstreamMs as number) <= (line.durationMs as number));
  assert.equal(line.cache, 'miss');
  assert.equal(typeof line.extprocMs, 'number');
  assert.equal(line.traceId, null, 'tracing is off');
  assert.equal(line.tls, null);
  assert.equal(line.error, null);
  assert.equal(line.aborted, false);
  assert.ok(!proxy.logs().some((l) => l.msg === 'access'), 'nothing on the component log');
});

test('local replies and refusals at the edge carry x-request-id too', async () => {
  const local = await send(proxy, 'unused', { host: 'not-an-actor.example.com' });
  assert.ok(local.status >= 400);
  assert.match(String(local.headers['x-request-id']), UUID);
  assert.equal((await lineOf(String(local.headers['x-request-id']))).status, local.status);
  const refused = await rawExchange(proxy.address, ['GET / HTTP/1.1', `Host: ${hostOf(actorName(1))}`, `Host: ${hostOf(actorName(2))}`, 'Connection: close', '', '']);
  assert.equal(refused.status, 400);
  const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(refused.head)?.[1];
  assert.match(String(id), UUID);
  assert.equal((await lineOf(String(id))).error, 'PROXY_ERR_DUPLICATE_HOST');
});

test('HTTPS: the line names the TLS version and the SNI', async () => {
  const port = Number(proxy.addresses.tls?.split(':').pop());
  const answer = await new Promise<{ status: number; id: string }>((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/', servername: 'localhost', ca: undefined, rejectUnauthorized: false, headers: { host: hostOf(actorName(3)) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.equal(answer.status, 200);
  const line = await lineOf(answer.id);
  assert.deepEqual(line.tls, { version: 'TLSv1.3', sni: 'localhost' });
});

test('a state-changing admin call is an access line with the caller; SIGUSR1 reopens the file after a rotation', async () => {
  await send(proxy, actorName(4));
  await adminJson(proxy.admin, `/cache/demo/${actorName(4)}`, 'DELETE');
  let admin: Record<string, unknown> | undefined;
  await waitFor(async () => (admin = (await lines()).find((l) => l.msg === 'admin')) !== undefined, 5000, 'the admin line');
  assert.equal(admin?.method, 'DELETE');
  assert.equal(admin?.path, `/cache/demo/${actorName(4)}`);
  assert.match(String(admin?.client), /^127\.0\.0\.1:\d+$/);
  assert.equal(admin?.status, 200);

  const rotated = `${logFile}.1`;
  await rename(logFile, rotated);
  const before = await send(proxy, actorName(4));
  await lineOf(String(before.headers['x-request-id']), rotated); // written to the moved file until told
  process.kill(proxy.component.pid, 'SIGUSR1');
  await waitFor(async () => {
    const a = await send(proxy, actorName(4));
    return (await lines()).some((l) => l.requestId === a.headers['x-request-id']);
  }, 5000, 'a line in the reopened file');
  assert.ok((await lines(rotated)).length > 0, 'the rotated file keeps its lines');
});

test('--xff-trusted-hops 1: the peer is a trusted proxy and its request id is kept (auto)', async () => {
  const trusting = await startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--request-id-trusted', 'auto', '--xff-trusted-hops', '1'] });
  try {
    const a = await send(trusting, actorName(5), { requestId: 'lb-assigned-7' });
    assert.equal(a.headers['x-request-id'], 'lb-assigned-7');
    assert.equal(a.app?.requestId, 'lb-assigned-7');
  } finally {
    await trusting.stop();
  }
});

test('--workers 2 with a file: both processes append whole lines', async () => {
  const file = path.join(dir, 'workers.log');
  const pair = await startTestProxy({ extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--workers', '2', '--access-log', file] });
  try {
    const ids = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => String((await send(pair, actorName(i % 6), { headers: { connection: 'close' } })).headers['x-request-id'])),
    );
    await waitFor(async () => (await lines(file)).filter((l) => l.msg === 'access').length >= ids.length, 10_000, 'every line');
    const all = await lines(file); // every line parses: none was split by the other process's
    assert.deepEqual(new Set(all.map((l) => l.requestId)), new Set(ids));
    assert.equal(new Set(all.map((l) => l.pid)).size, 2, 'both workers wrote');
  } finally {
    await pair.stop();
  }
});
