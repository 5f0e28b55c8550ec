import { test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type Socket } from 'node:net';
import { once } from 'node:events';
import pino from 'pino';
import { waitFor } from '../../lib/testing/wait.js';
import { TunnelHub } from './hub.js';
import { UpgradeTunnel } from './upgrade-tunnel.js';

/** A connected pair of sockets over loopback: [the peer, the proxy's end]. */
async function pair(): Promise<[Socket, Socket]> {
  const server = net.createServer({ allowHalfOpen: true });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const peer = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const [[mine]] = await Promise.all([accepted, once(peer, 'connect')]);
  server.close();
  return [peer, mine];
}

interface Rig {
  readonly hub: TunnelHub;
  readonly client: Socket;
  readonly worker: Socket;
  readonly tunnel: UpgradeTunnel;
  released: number;
}

async function rig(idleTimeoutMs = 0): Promise<Rig> {
  const hub = new TunnelHub(pino({ level: 'silent' }));
  const [client, proxyClientSide] = await pair();
  const [worker, proxyUpstreamSide] = await pair();
  const r = { hub, client, worker, released: 0 } as Rig & { tunnel: UpgradeTunnel };
  r.tunnel = new UpgradeTunnel(proxyClientSide, proxyUpstreamSide, Buffer.from('early'), { hub, idleTimeoutMs }, () => r.released++);
  return r;
}

const closedOnce = (t: UpgradeTunnel): Promise<void> => new Promise((resolve) => t.onClose(resolve));

test('bytes flow both ways; bytes the client sent before the 101 go first', async () => {
  const r = await rig();
  let atWorker = '';
  r.worker.on('data', (c: Buffer) => (atWorker += c.toString()));
  r.client.write('ping');
  await waitFor(() => atWorker === 'earlyping', 5000, 'the client bytes at the worker');
  r.worker.write('pong');
  const [echo] = (await once(r.client, 'data')) as [Buffer];
  assert.equal(echo.toString(), 'pong');
  assert.deepEqual(r.tunnel.bytes(), { fromClient: 9, toClient: 4 });
  const closed = closedOnce(r.tunnel);
  r.worker.once('end', () => r.worker.end()); // the client's FIN reaches the worker, which closes too
  r.client.destroy();
  await closed;
  assert.equal(r.released, 1, 'the pool slot is given back once');
  const stats = r.hub.stats.snapshot().upgrade;
  assert.deepEqual({ active: stats.active, total: stats.total, closed: stats.closed.client, bytes: stats.bytes }, { active: 0, total: 1, closed: 1, bytes: { fromClient: 9, toClient: 4 } });
});

test('half-close: the client FIN reaches the worker, which can still answer before it closes', async () => {
  const r = await rig();
  r.client.on('data', () => undefined);
  r.worker.on('data', () => undefined);
  const workerEnded = once(r.worker, 'end');
  r.client.end();
  await workerEnded;
  const got = once(r.client, 'data');
  r.worker.write('last words');
  assert.equal(((await got) as [Buffer])[0].toString(), 'last words');
  const closed = closedOnce(r.tunnel);
  r.worker.end();
  await closed;
  assert.equal(r.tunnel.reason, 'client');
});

test('a client that stops reading back-pressures the worker: the proxy buffers at most a socket buffer', async () => {
  const r = await rig();
  r.client.pause(); // never reads
  const chunk = Buffer.alloc(64 * 1024, 1);
  const limit = 256 * 1024 * 1024;
  let accepted = 0;
  let blocked = false;
  const flood = (): void => {
    blocked = false;
    while (accepted < limit) {
      accepted += chunk.length;
      if (!r.worker.write(chunk)) {
        blocked = true;
        r.worker.once('drain', flood);
        return;
      }
    }
  };
  flood();
  const proxyClientSide = (r.tunnel as unknown as { client: Socket }).client;
  const proxyUpstreamSide = (r.tunnel as unknown as { upstream: Socket }).upstream;
  await waitFor(() => blocked && proxyUpstreamSide.readableFlowing === false, 20_000, 'the worker to be blocked');
  assert.ok(accepted < 64 * 1024 * 1024, `the worker could write only what the buffers hold, not ${accepted} bytes`);
  assert.ok(proxyClientSide.writableLength <= 1024 * 1024, `the proxy holds ${proxyClientSide.writableLength} bytes for the client`);
  r.client.on('error', () => undefined);
  r.worker.on('error', () => undefined);
  const closed = closedOnce(r.tunnel);
  r.tunnel.close('drain');
  await closed;
  r.client.destroy();
  r.worker.destroy();
  assert.equal(r.hub.stats.snapshot().upgrade.closed.drain, 1);
});

test('the idle timeout closes a tunnel that carries nothing; the drain closes what is still open at its timeout', async () => {
  const idle = await rig(50);
  idle.client.on('data', () => undefined);
  await closedOnce(idle.tunnel);
  assert.equal(idle.tunnel.reason, 'idle');
  const open = await rig();
  assert.equal(await open.hub.drain(20), false);
  assert.equal(open.hub.draining, true);
  await waitFor(() => open.hub.size === 0, 5000, 'the drained tunnel to close');
  assert.equal(open.tunnel.reason, 'drain');
});
