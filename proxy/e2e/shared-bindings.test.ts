/**
 * End to end, `--workers 2`: the two proxy processes share one binding table through the primary. A binding one
 * process learned is a hit in the other (one ext_proc stream and one ResumeActor in all), and a binding one process
 * evicted as stale is gone from the other too. Which process served a request is read from the access log's pid.
 * Needs processes: `--workers 2` (node:cluster) shares the table between worker processes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { actorName, adminJson, client, extprocStats, resetStats, resumeCalls, send, startStack, ATESPACE, type Extproc, type Stack, type Stub } from '../testing/stack.js';
import type { TestProxy } from '../testing/proxy.js';
import type { StatsDocument } from '../admin/stats-document.js';

type SharedStats = StatsDocument & { cache: Required<StatsDocument['cache']> };

interface Dump {
  workers: { status: number; body: { bindings: { key: string; address: string }[] } }[];
}

let stack: Stack<TestProxy>;
let stub: Stub;
let extproc: Extproc;
let proxy: TestProxy;
let seq = 0;

before(async () => {
  stack = await startStack({ mode: 'process', stub: { workers: 4, capacity: 4, actors: 8 }, proxyArgs: ['--workers', '2', '--access-log', 'on', '--cache-ttl-ms', '60000'] });
  ({ stub, extproc, proxy } = stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await stack?.stop();
});

const stats = (): Promise<SharedStats> => adminJson<SharedStats>(proxy.admin, '/stats');

/** Sends one request on a fresh connection (the primary hands connections to the workers in turn); returns its access line. */
async function once(actor: string): Promise<{ status: number; pid: number; cache: string; attempts: number }> {
  const requestId = `shared-${seq++}`;
  const answer = await send(proxy, actor, { requestId, headers: { connection: 'close' } });
  const find = (): Record<string, unknown> | undefined => proxy.component.logs().find((l) => l.msg === 'access' && l.requestId === requestId);
  await waitFor(() => find() !== undefined, 5000, `the access line of ${requestId}`);
  const line = find() as Record<string, unknown>;
  return { status: answer.status, pid: line.pid as number, cache: line.cache as string, attempts: line.attempts as number };
}

/** Sends requests until a process other than `pid` serves one (each answer checked on the way). */
async function untilServedByAnother(actor: string, pid: number): Promise<{ status: number; pid: number; cache: string }> {
  for (let i = 0; i < 40; i++) {
    const a = await once(actor);
    assert.equal(a.status, 200);
    if (a.pid !== pid) return a;
    assert.equal(a.cache, 'hit');
  }
  throw new Error('40 requests on fresh connections all reached one process');
}

async function bindingsOf(key: string): Promise<string[]> {
  const dump = await adminJson<Dump>(proxy.admin, '/cache');
  return dump.workers.map((w) => w.body.bindings.find((b) => b.key === key)?.address ?? 'none');
}

test('--workers 2: a miss in one process is a hit in the other (one ext_proc stream, one ResumeActor)', async () => {
  const actor = actorName(0);
  await resetStats(proxy.admin, extproc.admin, stub.admin);
  const first = await once(actor);
  assert.equal(first.status, 200);
  assert.equal(first.cache, 'miss');
  await waitFor(async () => (await stats()).cache.shared.adopted >= 1, 5000, 'the other process adopting the binding');
  const other = await untilServedByAnother(actor, first.pid);
  assert.equal(other.cache, 'hit', 'the other process never asked ext_proc');
  assert.equal((await extprocStats(extproc)).streams.total, 1);
  assert.equal(await resumeCalls(stub), 1);
  const s = await stats();
  assert.equal(s.cache.misses, 1);
  assert.equal(s.cache.shared.enabled, true);
});

test('--workers 2: a stale eviction in one process removes the binding from the other', async () => {
  const actor = actorName(1);
  const key = `${ATESPACE}/${actor}`;
  const first = await once(actor);
  assert.equal(first.status, 200);
  await waitFor(async () => (await bindingsOf(key)).every((a) => a !== 'none'), 5000, 'both processes holding the binding');
  await resetStats(proxy.admin, extproc.admin);
  await adminJson(stub.admin, `/actors/${ATESPACE}/${actor}/suspend`, 'POST');

  const stale = await once(actor);
  assert.equal(stale.status, 200);
  assert.equal(stale.attempts, 2, 'the stale binding was evicted and the request re-run');
  await waitFor(async () => (await stats()).cache.shared.dropped >= 1, 5000, 'the other process dropping the stale binding');
  const s = await stats();
  assert.equal(s.cache.evictions.stale, 1, 'only the process that used it evicted it');
  await waitFor(async () => {
    const now = await bindingsOf(key);
    return now.every((a) => a !== 'none' && a === now[0]);
  }, 5000, 'both processes holding the re-learned binding');

  const other = await untilServedByAnother(actor, stale.pid);
  assert.equal(other.cache, 'hit', 'the other process serves the re-learned binding, not the stale one');
  assert.equal((await extprocStats(extproc)).streams.total, 1, 'one ext_proc stream: the re-run of the stale request');
});
