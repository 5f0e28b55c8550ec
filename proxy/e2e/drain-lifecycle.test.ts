/**
 * End to end, SIGTERM on a real proxy process whose worker holds a response until the test releases it, so "in
 * flight when SIGTERM arrived" is a fact, not a timing guess: `/ready` turns 503, the listener closes at once (new
 * connections refused), a request arriving on an open keep-alive connection is served with `Connection: close`,
 * the in-flight request finishes with `Connection: close` and the process exits 0 — or, when the drain timeout
 * expires first, the remaining connection is closed and the process still exits 0.
 * Needs processes: SIGTERM, and the exit code it ends with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import type { RunningComponent } from '../../lib/testing/component.js';
import { startEdgeStack, type EdgeStack } from '../testing/edge-harness.js';
import { RawConnection, rawRequest } from '../testing/raw-client.js';

const HOST = actorHost('drainer');

/** The first log line with this message (waits for it: lines arrive a little after what they report). */
async function logLine(proxy: RunningComponent, msg: string): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => proxy.logs().find((l) => l.msg === msg);
  await waitFor(() => find() !== undefined, 10_000, `the "${msg}" log line`);
  return find() as Record<string, unknown>;
}

async function readyStatus(stack: EdgeStack): Promise<number | undefined> {
  const r = await request(`${stack.admin}/ready`).catch(() => undefined);
  if (r === undefined) return undefined;
  await r.body.text();
  return r.statusCode;
}

/** Resolves with the exit code, or fails once `ms` passed (a drain that never ends). */
function exitWithin(proxy: RunningComponent, ms: number): Promise<number | null> {
  return Promise.race([
    proxy.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the proxy did not exit within ${ms} ms of SIGTERM`)), ms).unref()),
  ]);
}

/** What a fresh connection to `address` (`host:port`) meets: 'connected' or the error code. */
function connectOutcome(address: string): Promise<string> {
  return RawConnection.open(address).then(
    (c) => {
      c.destroy();
      return 'connected';
    },
    (e: NodeJS.ErrnoException) => e.code ?? e.message,
  );
}

/** Opens a keep-alive connection and has one request answered on it, so it is open and idle. */
async function idleConnection(stack: EdgeStack, path: string): Promise<RawConnection> {
  const conn = await RawConnection.open(stack.ingress);
  conn.write(rawRequest('GET', path, HOST));
  assert.equal((await conn.nextResponse()).status, 200);
  return conn;
}

test('SIGTERM with a request in flight: /ready 503, new connections refused, Connection: close, the request finishes, exit 0', async () => {
  const stack = await startEdgeStack(['--actor-cache', 'off', '--drain-timeout-ms', '60000', '--drain-idle-grace-ms', '120000', '--route-timeout-ms', '120000'], 'process');
  try {
    const idle = await idleConnection(stack, '/before');
    const busy = await RawConnection.open(stack.ingress);
    busy.write(rawRequest('GET', '/hold/1', HOST));
    await waitFor(() => stack.upstream.arrivals.includes('/hold/1'), 10_000, 'the request to reach the worker');

    stack.proxy.component.child.kill('SIGTERM');
    await waitFor(async () => (await readyStatus(stack)) === 503, 10_000, '/ready to fail');
    assert.equal((await logLine(stack.proxy.component, 'draining')).inflight, 1, 'the held request was in flight when SIGTERM arrived');
    assert.equal(await connectOutcome(stack.ingress), 'ECONNREFUSED', 'the listener closed at once: no new connections while draining');

    // A request arriving on the open keep-alive connection during the drain is served, and told the connection closes.
    idle.write(rawRequest('GET', '/during-drain', HOST));
    const during = await idle.nextResponse();
    assert.equal(during.status, 200);
    assert.equal(during.headers.connection, 'close');
    await idle.closedPromise;

    // The request in flight at SIGTERM finishes, also with Connection: close.
    const answer = busy.nextResponse();
    stack.upstream.release();
    const finished = await answer;
    assert.equal(finished.status, 200);
    assert.equal(finished.headers.connection, 'close');
    await busy.closedPromise;

    assert.equal(await exitWithin(stack.proxy.component, 30_000), 0);
    await logLine(stack.proxy.component, 'stopped');
    assert.equal(stack.proxy.logs().some((l) => typeof l.msg === 'string' && l.msg.startsWith('drain timeout')), false);
    assert.deepEqual(stack.upstream.arrivals, ['/before', '/hold/1', '/during-drain']);
  } finally {
    await stack.close();
  }
});

test('the drain timeout expires: the held connection is closed and the process still exits 0', async () => {
  const stack = await startEdgeStack(['--actor-cache', 'off', '--drain-timeout-ms', '300', '--route-timeout-ms', '120000'], 'process');
  try {
    const conn = await RawConnection.open(stack.ingress);
    const answer = conn.nextResponse().then(
      () => 'answered',
      () => 'closed without an answer',
    );
    conn.write(rawRequest('GET', '/hold/never', HOST));
    await waitFor(() => stack.upstream.arrivals.includes('/hold/never'), 10_000, 'the request to reach the worker');
    stack.proxy.component.child.kill('SIGTERM');
    // Well beyond the 300 ms drain timeout, far below what a timeout taken as seconds would allow.
    assert.equal(await exitWithin(stack.proxy.component, 30_000), 0);
    assert.equal(await answer, 'closed without an answer');
    assert.equal((await logLine(stack.proxy.component, 'draining')).inflight, 1);
    assert.equal((await logLine(stack.proxy.component, 'drain timeout: closing remaining connections')).inflight, 1);
    await logLine(stack.proxy.component, 'stopped');
  } finally {
    await stack.close();
  }
});
