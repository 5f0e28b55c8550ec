/**
 * Needs processes: it kills one of `--workers 2`. A proxy worker that still dies (killed, out of memory) is replaced
 * by the primary, and the other worker serves every request meanwhile: no client request fails because one worker
 * died, once the primary knows it is gone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type TestProxy } from '../testing/proxy.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

const HOST = actorHost('replaced-actor');

let up: Upstream;
let ep: ScriptedExtProc;
let proxy: TestProxy;
let seq = 0;

before(async () => {
  up = await startUpstream((_req, res) => res.end('ok'));
  ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
  proxy = await startTestProxy({ extproc: ep.address, args: ['--workers', '2', '--access-log', 'on', '--actor-cache', 'off'] });
});

after(async () => {
  await proxy?.component.stop();
  await ep?.close();
  await up?.close();
});

/** One request on a fresh connection (the primary hands connections to the workers in turn): its status and the pid that served it. */
async function once(): Promise<{ status: number; pid: number }> {
  const requestId = `replaced-${seq++}`;
  const r = await request(`${proxy.ingress}/`, { headers: { host: HOST, 'x-request-id': requestId, connection: 'close' } });
  await r.body.text();
  const find = (): Record<string, unknown> | undefined => proxy.component.logs().find((l) => l.msg === 'access' && l.requestId === requestId);
  await waitFor(() => find() !== undefined, 5000, `the access line of ${requestId}`);
  return { status: r.statusCode, pid: (find() as Record<string, unknown>).pid as number };
}

async function pidsServing(count: number): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < 50 && pids.size < count; i++) {
    const r = await once();
    assert.equal(r.status, 200);
    pids.add(r.pid);
  }
  return pids;
}

test('a worker killed with SIGKILL is replaced; the other keeps serving every request', async () => {
  const before = await pidsServing(2);
  assert.equal(before.size, 2, 'both workers serve');
  const [victim, survivor] = [...before] as [number, number];
  process.kill(victim, 'SIGKILL');
  await waitFor(() => proxy.component.logs().some((l) => l.msg === 'proxy worker died: starting a replacement'), 10_000, 'the primary noticed');
  // Meanwhile and after, every request is answered, by the survivor or, once it is up, the replacement (a fork
  // takes a second or more on a busy machine: requests keep going, paced, until the replacement serves one).
  const after = new Set<number>();
  const deadline = Date.now() + 30_000;
  while (after.size < 2 && Date.now() < deadline) {
    const r = await once();
    assert.equal(r.status, 200, 'no request fails because one worker died');
    assert.notEqual(r.pid, victim, 'the dead worker serves nothing');
    after.add(r.pid);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(after.has(survivor), 'the survivor serves');
  assert.equal(after.size, 2, 'a replacement serves too');
});
