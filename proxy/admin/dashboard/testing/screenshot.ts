/**
 * Writes a PNG of the live dashboard for docs/operating.md: `npm run screenshot:dashboard [-- FILE]` (default
 * docs/dashboard.png). Starts a stub, extproc and a proxy on loopback, sends a mix of traffic (misses, hits, re-runs
 * after moves, errors, an open WebSocket) while headless Chromium shows `/dashboard`, and captures the page.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { browserMissing, launchBrowser } from './browser.js';
import { adminJson, client, send, startStack } from '../../../testing/stack.js';
import { openSocket } from '../../../testing/ws-client.js';

async function main(file: string): Promise<void> {
  const missing = browserMissing();
  if (missing !== undefined) throw new Error(missing);
  const stack = await startStack({ stub: { workers: 6, capacity: 4, actors: 24 }, proxyArgs: ['--cache-ttl-ms', '600000'] });
  const { stub, proxy } = stack;
  const browser = await launchBrowser({ viewport: { width: 1280, height: 860 } });
  try {
    const page = await browser.context.newPage();
    await page.goto(`${proxy.admin}/dashboard?interval=500`);
    const socket = await openSocket(proxy.ingress, 'actor-022'); // not one the traffic below moves
    const actors = Array.from({ length: 20 }, (_, i) => `actor-${String(i).padStart(3, '0')}`);
    let stop = false;
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        await send(proxy, actors[i % actors.length] as string);
        if (i % 150 === 0) await adminJson(stub.admin, `/actors/demo/${actors[(i / 150) % actors.length]}/move`, 'POST'); // the next request re-runs
        if (i % 97 === 0) await send(proxy, 'x', { host: 'not-an-actor.example' });
        if (i % 211 === 0) await send(proxy, 'actor-900');
      }
    })();
    await new Promise((r) => setTimeout(r, 6000));
    await page.fill('#search', 'actor-01');
    await new Promise((r) => setTimeout(r, 1500));
    mkdirSync(path.dirname(file), { recursive: true });
    await page.screenshot({ path: file, fullPage: true });
    stop = true;
    await traffic;
    socket.ws.close();
    process.stdout.write(`dashboard screenshot: ${file}\n`);
  } finally {
    await browser.close();
    await stack.stop();
    await client.close();
  }
}

main(path.resolve(process.argv[2] ?? 'docs/dashboard.png')).catch((err: unknown) => {
  process.stderr.write(`screenshot: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
