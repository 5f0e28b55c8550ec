/**
 * End to end, what the egress gateway never dials whatever a policy allows: an actor whose policy allows every
 * destination still cannot tunnel into the proxy itself (its admin, ingress or egress listener) nor to the cloud
 * metadata address, and these refusals never reach ext_proc. `--egress-never-dial none` drops the ranges, never the
 * proxy's own listeners.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { h1Through, startEgressStack, type EgressProxy, type EgressStack } from '../egress/testing/egress-stack.js';

let stack: EgressStack;
let proxy: EgressProxy;
let open: EgressProxy;
let echo: Destination;

before(async () => {
  stack = await startEgressStack();
  proxy = await stack.startProxy({ ttlMs: 60_000 });
  open = await stack.startProxy({ ttlMs: 60_000, args: ['--egress-never-dial', 'none'] });
  echo = await startEcho();
});

after(async () => {
  await stack?.stop();
  await echo?.close();
});

const hostPort = (url: string): string => new URL(url).host;

test("an actor allowed everything still never reaches the proxy's own listeners or the metadata address, and ext_proc is not asked", async () => {
  await stack.setPolicy('actor-000', { rules: [{ kind: 'all', ports: 'all' }] });
  const cert = await stack.certificate('actor-000');
  assert.equal((await h1Through(proxy, cert, echo.address)).status, 200, 'an ordinary destination is the policy\'s to allow');
  const before = await stack.controlCalls();
  const own = [hostPort(proxy.handle.admin), proxy.handle.address, proxy.handle.addresses.egress as string];
  for (const destination of [...own, '169.254.169.254:80', '[::ffff:127.0.0.1]:80']) {
    const answer = await h1Through(proxy, cert, destination);
    assert.deepEqual({ destination, status: answer.status, body: answer.body }, { destination, status: 403, body: 'egress denied' });
  }
  assert.deepEqual(await stack.controlCalls(), before, 'no control-plane read for a destination never dialled');
  const stats = (await proxy.admin<{ egressTunnels: { refusals: Record<string, number> } }>('GET', '/stats')).body;
  assert.equal(stats.egressTunnels.refusals['forbidden_destination'], 5);
  // Without the ranges, the metadata address is the policy's again (nothing listens there: unreachable, not denied),
  // while the proxy's own listeners stay refused.
  assert.equal((await h1Through(open, cert, hostPort(open.handle.admin))).status, 403);
  assert.notEqual((await h1Through(open, cert, '169.254.169.254:80')).status, 403);
});
