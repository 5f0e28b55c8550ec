/**
 * End to end, a real proxy process (one, and `--workers 2`): SIGTERM while clients loop POSTs on keep-alive
 * connections. Every POST a client wrote gets a complete response; the only failures allowed are a connection the
 * proxy had closed (or refused) before the request was written.
 * Needs processes: every test sends SIGTERM and expects exit code 0; one runs `--workers 2`.
 */
import { describe, test } from 'node:test';
import { request } from 'undici';
import assert from 'node:assert/strict';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startEdgeStack, type EdgeStack } from '../testing/edge-harness.js';
import type { TestProxy } from '../testing/proxy.js';
import { RawConnection, rawRequest } from '../testing/raw-client.js';

interface LoopCounts {
  /** POSTs written to a connection the proxy had not closed. */
  written: number;
  /** Complete responses to them. */
  completed: number;
  /** Responses that carried `Connection: close`. */
  closing: number;
  /** Written, then the connection broke before a complete response: a lost request. */
  lost: number;
  /** Connections found closed by the proxy before a request was written, and refused connects. */
  notWritten: number;
}

/** POSTs in a loop until a connect is refused (the proxy stopped listening). */
async function postLoop(ingress: string, client: number, counts: LoopCounts): Promise<void> {
  const body = JSON.stringify({ client, pad: 'x'.repeat(200) });
  let conn: RawConnection | undefined;
  for (let i = 0; ; i++) {
    if (conn === undefined) {
      try {
        conn = await RawConnection.open(ingress);
      } catch {
        counts.notWritten++;
        return;
      }
    }
    if (conn.peerEnded) {
      counts.notWritten++;
      conn.destroy();
      conn = undefined;
      continue;
    }
    const current = conn;
    counts.written++;
    current.write(rawRequest('POST', `/loop?c=${client}&i=${i}`, actorHost('looper'), { 'content-type': 'application/json' }, body));
    try {
      const answer = await current.nextResponse();
      assert.equal(answer.status, 200);
      counts.completed++;
      if (answer.headers.connection === 'close') {
        counts.closing++;
        await current.closedPromise;
        conn = undefined;
      }
    } catch {
      counts.lost++;
      current.destroy();
      conn = undefined;
    }
  }
}

async function sigtermUnderPostLoops(stack: EdgeStack<TestProxy>, clients: number): Promise<LoopCounts> {
  const counts: LoopCounts = { written: 0, completed: 0, closing: 0, lost: 0, notWritten: 0 };
  const loops = Array.from({ length: clients }, (_, c) => postLoop(stack.ingress, c, counts));
  await waitFor(() => counts.completed >= clients * 20, 20_000, 'every client to be looping');
  stack.proxy.component.child.kill('SIGTERM');
  await Promise.all(loops);
  assert.equal(await stack.proxy.component.exited, 0);
  return counts;
}

// Side by side: each test starts its own proxy process (and upstream, extproc and ports) and stops it.
describe('drain', { concurrency: true }, () => {
  for (const workers of ['1', '2']) {
    test(`SIGTERM under looping keep-alive POSTs (--workers ${workers}): nothing written is lost`, async (t) => {
      const stack = await startEdgeStack(['--workers', workers, '--access-log', 'off', '--drain-timeout-ms', '10000'], 'process');
      try {
        const counts = await sigtermUnderPostLoops(stack, 6);
        t.diagnostic(JSON.stringify(counts));
        assert.equal(counts.lost, 0, 'POSTs written and then reset');
        assert.equal(counts.completed, counts.written);
        assert.ok(counts.closing >= 1, 'requests arriving during the drain were served with Connection: close');
        assert.equal(stack.upstream.arrivals.length, counts.completed);
        assert.ok(stack.proxy.logs().some((l) => l.msg === 'stopped'));
      } finally {
        await stack.close();
      }
    });
  }

  /** Sends SIGTERM and waits until the proxy reports that it is draining (`/ready` 503). */
  async function sigtermAndWaitForDraining(stack: EdgeStack<TestProxy>): Promise<void> {
    stack.proxy.component.child.kill('SIGTERM');
    await waitFor(async () => {
      const res = await request(`${stack.admin}/ready`).catch(() => undefined);
      if (res === undefined) return false;
      await res.body.text();
      return res.statusCode === 503;
    }, 5000, '/ready to answer 503');
  }

  test('during the drain, a request on an idle keep-alive connection is served with Connection: close', async () => {
    const stack = await startEdgeStack(['--drain-idle-grace-ms', '60000', '--drain-timeout-ms', '60000'], 'process');
    try {
      const conn = await RawConnection.open(stack.ingress);
      conn.write(rawRequest('GET', '/before', actorHost('idler')));
      assert.equal((await conn.nextResponse()).status, 200);
      await sigtermAndWaitForDraining(stack);
      assert.ok(!conn.peerEnded, 'the idle connection is still open');
      conn.write(rawRequest('POST', '/during', actorHost('idler'), {}, 'written during the drain'));
      const answer = await conn.nextResponse();
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.connection, 'close');
      await conn.closedPromise;
      assert.equal(await stack.proxy.component.exited, 0);
      assert.deepEqual(stack.upstream.arrivals, ['/before', '/during']);
    } finally {
      await stack.close();
    }
  });

  test('during the drain, a connection that stays idle for the grace is closed and the drain ends without its timeout', async () => {
    const stack = await startEdgeStack(['--drain-idle-grace-ms', '200', '--drain-timeout-ms', '60000'], 'process');
    try {
      const conn = await RawConnection.open(stack.ingress);
      conn.write(rawRequest('GET', '/before', actorHost('idler')));
      assert.equal((await conn.nextResponse()).status, 200);
      stack.proxy.component.child.kill('SIGTERM');
      await conn.closedPromise;
      assert.equal(await stack.proxy.component.exited, 0);
      assert.ok(!stack.proxy.logs().some((l) => l.msg === 'drain timeout: closing remaining connections'));
    } finally {
      await stack.close();
    }
  });
});
