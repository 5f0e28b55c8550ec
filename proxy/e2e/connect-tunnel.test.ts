/**
 * End to end, with curl as the client: `curl -p -x http://<connect listener> http://<actor host>/` opens a CONNECT
 * tunnel whose bytes are a new connection into the ingress; two requests inside one tunnel reach two actors on
 * different workers, each routed and logged like a direct request; the tunnel gets its own log line and counters.
 * CONNECT targets the listener refuses each get their catalog answer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { actorName, adminJson, client, hostOf, send, startStack, type DemoAnswer, type Stack } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';
import { rawExchange } from '../testing/raw-exchange.js';
import type { TunnelStatsBlock } from '../ops/tunnel-stats.js';

const run = promisify(execFile);

let stack: Stack;
let proxy: InProcessTestProxy;
let connect: string;

describe('CONNECT tunnels, with curl', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, capacity: 8, actors: 20 }, proxyArgs: ['--connect-listen', '127.0.0.1:0'] });
    proxy = stack.proxy;
    connect = proxy.addresses.connect as string;
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    await stack?.stop();
  });

  const tunnels = async (): Promise<TunnelStatsBlock> => (await adminJson<{ tunnels: TunnelStatsBlock }>(proxy.admin, '/stats')).tunnels;

  test('curl -p -x: two requests in one tunnel reach two actors on different workers', async () => {
    // Two actors the control plane placed on different workers.
    const placed = new Map<string, string>();
    for (let i = 0; i < 20 && placed.size < 2; i++) {
      const a = await send(proxy, actorName(i));
      if (a.app !== undefined && ![...placed.values()].includes(a.app.worker)) placed.set(actorName(i), a.app.worker);
    }
    assert.equal(placed.size, 2);
    const [first, second] = [...placed.keys()] as [string, string];
    const out = await run('curl', [
      '-sS', '-p', '-x', `http://${connect}`,
      '-H', 'x-request-id: tunnel-1', `http://${hostOf(first)}/one`,
      '--next', '-sS', '-p', '-x', `http://${connect}`,
      '-H', 'x-request-id: tunnel-2', `http://${hostOf(second)}/two`,
    ]);
    const answers = out.stdout.trim().split(/\n|(?<=\})(?=\{)/).map((l) => JSON.parse(l) as DemoAnswer);
    assert.deepEqual(answers.map((a) => [a.actor, a.path, a.worker]), [
      [first, '/one', placed.get(first)],
      [second, '/two', placed.get(second)],
    ]);
    const logs = (): Record<string, unknown>[] => proxy.logs();
    await waitFor(() => logs().filter((l) => l.msg === 'access' && String(l.requestId).startsWith('tunnel-')).length === 2, 5000, 'both inner access lines');
    const isTunnelLine = (l: Record<string, unknown>): boolean => l.msg === 'access' && l.method === 'CONNECT' && l.status === 200;
    await waitFor(() => logs().some(isTunnelLine), 10_000, 'the tunnel log line');
    const line = logs().find(isTunnelLine) as { authority: string; tunnel: { kind: string; bytesFromClient: number; bytesToClient: number; closedBy: string } };
    assert.ok(line.tunnel.bytesFromClient > 0 && line.tunnel.bytesToClient > 0);
    assert.equal(line.tunnel.kind, 'connect');
    assert.match(line.authority, /:80$/);
    const t = await tunnels();
    assert.ok(t.connect.total >= 1);
    assert.equal(t.connect.active, 0);
  });

  test('CONNECT targets the listener refuses: no port (400), not an actor (404); other methods (405); CONNECT on the ingress (400)', async () => {
    const noPort = await rawExchange(connect, [`CONNECT ${hostOf(actorName(1))} HTTP/1.1`, `Host: ${hostOf(actorName(1))}`]);
    assert.equal(noPort.status, 400);
    assert.equal(noPort.body, 'CONNECT target must be host:port\n');
    const notActor = await rawExchange(connect, ['CONNECT example.com:443 HTTP/1.1', 'Host: example.com:443']);
    assert.equal(notActor.status, 404);
    assert.equal(notActor.body, 'CONNECT target is not an actor host\n');
    const get = await rawExchange(connect, ['GET / HTTP/1.1', `Host: ${hostOf(actorName(1))}`]);
    assert.equal(get.status, 405);
    // With an expectation: the 405 at once, no 100 Continue inviting a body that is never read.
    const expecting = await rawExchange(connect, ['PUT / HTTP/1.1', `Host: ${hostOf(actorName(1))}`, 'Expect: 100-continue', 'Content-Length: 3']);
    assert.equal(expecting.status, 405);
    assert.doesNotMatch(expecting.raw, /100 Continue/);
    // CONNECT on the ingress itself: an authority-form target, refused by the request-target rules as any other.
    const onIngress = await rawExchange(proxy.address, [`CONNECT ${hostOf(actorName(1))}:80 HTTP/1.1`, `Host: ${hostOf(actorName(1))}:80`]);
    assert.equal(onIngress.status, 400);
    assert.equal(onIngress.body, 'invalid request target\n');
    assert.ok((await tunnels()).connect.refused >= 2);
  });
});
