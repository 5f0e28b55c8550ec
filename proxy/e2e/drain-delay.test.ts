/**
 * `--drain-delay-ms` on a real proxy process: from SIGTERM on, `/ready` answers 503 while the ingress still accepts
 * new connections and serves them as before (what lets a load balancer take the replica out before any connect
 * is refused); `/live` stays 200; only after the delay does the drain start, and the process exits 0.
 * Needs processes: SIGTERM starts the delay (a standalone process's own), and the exit code is checked.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { startTestProxy, type TestProxy } from '../testing/proxy.js';

const HOST = actorHost('drain-delay');
/**
 * Long enough that the checks below (five requests, each on a new connection) run inside it on a loaded machine;
 * the test waits for the exit anyway, so this is what the test costs.
 */
const DELAY_MS = 2000;
let up: Upstream;
let ep: ScriptedExtProc;
let proxy: TestProxy;

before(async () => {
  up = await startUpstream((_req, res) => res.end('ok'));
  ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
  proxy = await startTestProxy({ extproc: ep.address, args: ['--drain-delay-ms', String(DELAY_MS)] });
});

after(async () => {
  await proxy?.stop();
  await ep?.close();
  await up?.close();
});

/** A request on a connection of its own (a new connect each time). */
async function fresh(url: string, host?: string): Promise<{ status: number; text: string }> {
  const dispatcher = new Agent({ pipelining: 0 });
  try {
    const res = await request(url, { dispatcher, ...(host === undefined ? {} : { headers: { host } }) });
    return { status: res.statusCode, text: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

const messages = (): string[] => proxy.logs().map((l) => String(l.msg));

test('SIGTERM: /ready fails at once, new connections are served until the delay ends, then the drain runs and the process exits 0', async () => {
  const ingress = `${proxy.ingress}/`;
  const admin = proxy.admin;
  assert.equal((await fresh(`${admin}/ready`)).status, 200);
  proxy.component.child.kill('SIGTERM');
  await waitFor(async () => (await fresh(`${admin}/ready`)).status === 503, 3000, '/ready 503 after SIGTERM');
  assert.equal((await fresh(`${admin}/ready`)).text, 'DRAINING\n');
  assert.equal((await fresh(`${admin}/live`)).status, 200);
  const served = await fresh(ingress, HOST);
  assert.deepEqual(served, { status: 200, text: 'ok' });
  // Served before the drain began: the log has the delay's line and not yet the drain's. The line crosses a pipe
  // from the child, so it is awaited, not assumed to have arrived with the 503.
  await waitFor(
    () => messages().includes('readiness failed: serving until the drain starts'),
    3000,
    "the delay's log line",
  );
  assert.ok(!messages().includes('draining'), 'the drain must not have started while the delay runs');
  assert.equal(await proxy.component.exited, 0);
  const order = messages();
  assert.ok(order.indexOf('readiness failed: serving until the drain starts') < order.indexOf('draining'));
  assert.ok(order.includes('stopped'));
});
