/**
 * End to end, what the egress gateway never dials whatever a policy allows: an actor whose policy allows every
 * destination still cannot tunnel into the proxy itself (its admin, ingress or egress listener) nor to the cloud
 * metadata address (refused before any dial: nothing here leaves loopback), and these refusals never reach ext_proc.
 * `--egress-never-dial` replaces the default ranges, never the proxy's own listeners.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { h1Through, startEgressStack, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

let stack: EgressStack;
let proxy: EgressProxy;
let open: EgressProxy;
let echo: Destination;

describe('destinations the egress gateway never dials', () => {
  before(async () => {
    stack = await startEgressStack();
    proxy = await stack.startProxy({ ttlMs: 60_000 });
    open = await stack.startProxy({ ttlMs: 60_000, args: ['--egress-never-dial', '127.0.0.3/32'] });
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
    // --egress-never-dial replaces the ranges (nothing here dials outside loopback): its own range is refused, the
    // defaults' are the policy's again (an IPv4-mapped address reaches the echo server), the proxy's listeners never.
    const port = echo.address.slice(echo.address.lastIndexOf(':') + 1);
    assert.equal((await h1Through(open, cert, `127.0.0.3:${port}`)).status, 403);
    assert.equal((await h1Through(open, cert, `[::ffff:127.0.0.1]:${port}`)).status, 200);
    assert.equal((await h1Through(open, cert, hostPort(open.handle.admin))).status, 403);
  });
});
