/**
 * End to end, SIGTERM on a real proxy process in front of a plain node:http worker that holds each response until
 * the test releases it, so "in flight when SIGTERM arrived" is a fact, not a timing guess: `/ready` turns 503, new
 * connections are refused, a request arriving on an open connection is answered with `Connection: close`, the
 * in-flight request finishes and the process exits 0 — or, when the drain timeout expires first, the remaining
 * connection is closed and the process still exits 0.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type http from 'node:http';
import { request } from 'undici';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { hostOf, startProxy, until, type Proxy } from '../testing/stack.js';

let worker: Upstream;
let ep: ScriptedExtProc;
/** Held responses by path: the worker answers `/held/*` only when the test calls `release`. */
const held = new Map<string, http.ServerResponse>();

before(async () => {
  worker = await startUpstream((req, res) => {
    if (req.url?.startsWith('/held/')) held.set(req.url, res);
    else res.end(`answered ${req.url}`);
  });
  ep = await startScriptedExtProc(() => routeTo(worker.address));
});

after(async () => {
  for (const res of held.values()) res.destroy();
  await ep?.close();
  await worker?.close();
});

function release(path: string): void {
  const res = held.get(path);
  assert.ok(res, `${path} is held`);
  res.end(`answered ${path}`);
}

/** A raw keep-alive connection to the ingress that collects everything the proxy writes back. */
async function openConnection(p: Proxy): Promise<{ send(path: string): void; received(): string; closed: Promise<void> }> {
  const url = new URL(p.ingress);
  const socket = net.connect(Number(url.port), url.hostname);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    send: (path) => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostOf('drainer')}\r\n\r\n`),
    received: () => text,
    closed,
  };
}

/** The first log line with this message (waits for it: lines arrive a little after what they report). */
async function logLine(p: Proxy, msg: string): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => p.component.logs().find((l) => l.msg === msg);
  await until(() => find() !== undefined, 10_000, `the "${msg}" log line`);
  return find() as Record<string, unknown>;
}

async function readyStatus(p: Proxy): Promise<number | undefined> {
  const r = await request(`${p.admin}/ready`).catch(() => undefined);
  if (r === undefined) return undefined;
  await r.body.text();
  return r.statusCode;
}

/** Resolves with the exit code, or fails once `ms` passed (a drain that never ends). */
function exitWithin(p: Proxy, ms: number): Promise<number | null> {
  return Promise.race([
    p.component.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the proxy did not exit within ${ms} ms of SIGTERM`)), ms).unref()),
  ]);
}

function connectRefused(p: Proxy): Promise<string> {
  const url = new URL(p.ingress);
  return new Promise((resolve) => {
    const s = net.connect(Number(url.port), url.hostname);
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** The HTTP responses in a raw exchange, as [status line, lower-case headers]. */
function responses(raw: string): { status: string; headers: Record<string, string> }[] {
  return [...raw.matchAll(/(HTTP\/1\.1 \d+[^\r]*)\r\n((?:[^\r]+\r\n)*)\r\n/g)].map((m) => ({
    status: m[1] as string,
    headers: Object.fromEntries(
      (m[2] as string)
        .split('\r\n')
        .filter((l) => l !== '')
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    ),
  }));
}

test('SIGTERM with a request in flight: /ready 503, new connections refused, Connection: close, the request finishes, exit 0', async () => {
  const proxy = await startProxy(ep.address, ['--actor-cache', 'off', '--drain-timeout-ms', '60000', '--route-timeout-ms', '120000']);
  try {
    const conn = await openConnection(proxy);
    conn.send('/held/1');
    await until(() => held.has('/held/1'), 10_000, 'the request to reach the worker');

    proxy.component.child.kill('SIGTERM');
    await until(async () => (await readyStatus(proxy)) === 503, 10_000, '/ready to fail');
    assert.equal((await logLine(proxy, 'draining')).inflight, 1, 'the held request was in flight when SIGTERM arrived');
    assert.equal(await connectRefused(proxy), 'ECONNREFUSED', 'no new connections while draining');

    // A request that arrives on the open connection during the drain is served, and told the connection closes.
    conn.send('/during-drain');
    await until(() => worker.requests.some((r) => r.url === '/during-drain'), 10_000, 'the request sent during the drain to reach the worker');
    release('/held/1');
    await conn.closed;
    const answers = responses(conn.received());
    assert.deepEqual(answers.map((a) => a.status), ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    assert.equal(answers[1]?.headers.connection, 'close');
    assert.match(conn.received(), /answered \/held\/1[\s\S]*answered \/during-drain$/);

    assert.equal(await exitWithin(proxy, 30_000), 0);
    await logLine(proxy, 'stopped');
    assert.equal(proxy.component.logs().some((l) => typeof l.msg === 'string' && l.msg.startsWith('drain timeout')), false);
  } finally {
    await proxy.component.stop();
  }
});

test('the drain timeout expires: the held connection is closed and the process still exits 0', async () => {
  const proxy = await startProxy(ep.address, ['--actor-cache', 'off', '--drain-timeout-ms', '1000', '--route-timeout-ms', '120000']);
  try {
    const conn = await openConnection(proxy);
    conn.send('/held/never');
    await until(() => held.has('/held/never'), 10_000, 'the request to reach the worker');
    proxy.component.child.kill('SIGTERM');
    // Well beyond the 1 s drain timeout, far below what a timeout taken as seconds would allow.
    assert.equal(await exitWithin(proxy, 30_000), 0);
    await conn.closed;
    assert.equal(conn.received(), '', 'the client got no answer: its connection was closed');
    assert.equal((await logLine(proxy, 'draining')).inflight, 1);
    assert.equal((await logLine(proxy, 'drain timeout: closing remaining connections')).inflight, 1);
    await logLine(proxy, 'stopped');
  } finally {
    await proxy.component.stop();
  }
});
