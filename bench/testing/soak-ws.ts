/**
 * `npm run soak:ws`: N concurrent WebSockets (default 500) through a real stack (apiserver-stub with its workers,
 * extproc, one proxy process), each echoing one message every `--interval-ms` for `--seconds` (default 10 s, 100 ms).
 * Reports echoes answered and lost, and the proxy's memory: RSS before the sockets open, with all of them open
 * (after the run), and the difference per open socket; then the proxy's `tunnels` block.
 *
 *   npm run soak:ws -- [--sockets 500] [--seconds 10] [--interval-ms 100] [--actors 50]
 */
import { parseArgs } from 'node:util';
import { adminJson, actorName, client, startExtproc, startStub, STACK_TIMEOUTS } from '../../proxy/testing/stack.js';
import { startTestProxy } from '../../proxy/testing/proxy.js';
import { openSocket, type EchoSocket } from '../../proxy/testing/ws-client.js';

interface ProcessBlock {
  readonly rssBytes: number;
}

async function proxyRss(admin: string): Promise<number> {
  return (await adminJson<{ process: ProcessBlock }>(admin, '/stats')).process.rssBytes;
}

async function echoLoop(socket: EchoSocket, until: number, intervalMs: number, tally: { ok: number; lost: number }): Promise<void> {
  let i = 0;
  while (Date.now() < until) {
    const text = `m${i++}`;
    const echo = await Promise.race([socket.echo(text), socket.closed.then(() => undefined)]);
    if (echo?.data === text) tally.ok++;
    else {
      tally.lost++;
      return;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sockets: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      'interval-ms': { type: 'string', default: '100' },
      actors: { type: 'string', default: '50' },
    },
  });
  const sockets = Number(values.sockets);
  const seconds = Number(values.seconds);
  const intervalMs = Number(values['interval-ms']);
  const actors = Number(values.actors);
  const stub = await startStub({ workers: 4, capacity: Math.ceil(actors / 4) + 4, actors });
  const extproc = await startExtproc(stub);
  const proxy = await startTestProxy({ extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--access-log', 'off'] });
  try {
    // Warm-up: one socket per actor (bindings cached, pools and code paths warm), then closed.
    const warm = await Promise.all(Array.from({ length: actors }, (_, i) => openSocket(proxy.ingress, actorName(i))));
    await Promise.all(warm.map(async (s) => (await s.echo('warm'), s.close())));
    if (global.gc !== undefined) global.gc();
    const rssBefore = await proxyRss(proxy.admin);
    const opened: EchoSocket[] = [];
    for (let i = 0; i < sockets; i += 50) {
      opened.push(...(await Promise.all(Array.from({ length: Math.min(50, sockets - i) }, (_, j) => openSocket(proxy.ingress, actorName((i + j) % actors))))));
    }
    const tally = { ok: 0, lost: 0 };
    const started = Date.now();
    await Promise.all(opened.map((s) => echoLoop(s, started + seconds * 1000, intervalMs, tally)));
    const rssOpen = await proxyRss(proxy.admin);
    const tunnels = (await adminJson<{ tunnels: unknown }>(proxy.admin, '/stats')).tunnels;
    await Promise.all(opened.map((s) => s.close()));
    const perSocket = (rssOpen - rssBefore) / sockets;
    process.stdout.write(
      `${JSON.stringify(
        {
          sockets,
          seconds,
          intervalMs,
          echoes: tally.ok,
          lost: tally.lost,
          proxyRssBeforeMiB: +(rssBefore / 2 ** 20).toFixed(1),
          proxyRssOpenMiB: +(rssOpen / 2 ** 20).toFixed(1),
          proxyRssPerOpenSocketKiB: +(perSocket / 1024).toFixed(1),
          tunnels,
        },
        null,
        2,
      )}\n`,
    );
    if (tally.lost > 0) process.exitCode = 1;
  } finally {
    await proxy.component.stop();
    await extproc.component.stop();
    await stub.component.stop();
    await client.close();
  }
}

await main();
