/**
 * Writes a PNG of the live dashboard (docs/operating.md shows it): `npm run screenshot:dashboard [-- FILE] [--seconds N]` (without FILE, a new
 * temporary file; the path is printed). Starts a stub, extproc and a proxy on loopback and sends a paced mix of
 * traffic for N seconds (default 10): hits at a rate that rises and falls (40 to 160/s), misses (a binding dropped from the cache
 * every half second), re-runs after moves, errors, an open WebSocket. Then headless Chromium opens `/dashboard`,
 * whose first frame already holds the charts of those seconds, watches a few polls and a search, and is captured.
 * `docs/dashboard.png` is made with `-- docs/dashboard.png --seconds 90`.
 */
import path from 'node:path';
import os from 'node:os';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { browserMissing, launchBrowser } from '../../proxy/admin/dashboard/testing/browser.js';
import { adminJson, client, send, startStack, type Stack } from '../../proxy/testing/stack.js';
import { openSocket } from '../../proxy/testing/ws-client.js';

interface Args {
  readonly file: string;
  readonly seconds: number;
}

function parseArgs(argv: readonly string[]): Args {
  let file: string | undefined;
  let seconds = 10;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--seconds') seconds = Number(argv[++i]);
    else if (file === undefined && !a.startsWith('--')) file = a;
    else throw new Error(`unexpected argument ${a} (usage: [FILE] [--seconds N])`);
  }
  if (!(seconds > 0)) throw new Error('--seconds wants a positive number');
  // No FILE: never the tracked docs/dashboard.png by accident.
  return { file: path.resolve(file ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'actor-edge-dashboard-')), 'dashboard.png')), seconds };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Requests per second over time: between 40 and 160, a wave with a period of a minute, so the charts have a shape. */
const MEAN_RATE = 100;
const SWING = 60;
const PERIOD_S = 60;

/** Requests due by `t` seconds: the integral of the rate (a rate falling below the mean does not stall the traffic). */
function requestsDue(t: number): number {
  return MEAN_RATE * t + ((SWING * PERIOD_S) / (2 * Math.PI)) * (1 - Math.cos((2 * Math.PI * t) / PERIOD_S));
}

/** Paced traffic until `stop()` says so. */
async function traffic(stack: Stack, actors: readonly string[], stop: () => boolean): Promise<void> {
  const { stub, proxy } = stack;
  const started = Date.now();
  let sent = 0;
  let lastDrop = 0;
  for (let i = 0; !stop(); i++) {
    const elapsed = (Date.now() - started) / 1000;
    if (sent >= requestsDue(elapsed)) {
      await sleep(10);
      continue;
    }
    const actor = actors[i % actors.length] as string;
    await send(proxy, actor);
    sent++;
    if (Date.now() - lastDrop > 500) {
      lastDrop = Date.now();
      await adminJson(proxy.admin, `/cache/demo/${actor}`, 'DELETE').catch(() => undefined); // its next request misses
    }
    if (i % 400 === 0) await adminJson(stub.admin, `/actors/demo/${actors[(i / 400) % actors.length]}/move`, 'POST'); // the next request re-runs
    if (i % 97 === 0) await send(proxy, 'x', { host: 'not-an-actor.example' });
    if (i % 211 === 0) await send(proxy, 'actor-900');
  }
}

async function main({ file, seconds }: Args): Promise<void> {
  const missing = browserMissing();
  if (missing !== undefined) throw new Error(missing);
  const stack = await startStack({ stub: { workers: 6, capacity: 4, actors: 24 }, proxyArgs: ['--cache-ttl-ms', '600000'] });
  const browser = await launchBrowser({ viewport: { width: 1280, height: 860 } });
  try {
    const socket = await openSocket(stack.proxy.ingress, 'actor-022'); // not one the traffic below moves
    const actors = Array.from({ length: 20 }, (_, i) => `actor-${String(i).padStart(3, '0')}`);
    let stop = false;
    const flowing = traffic(stack, actors, () => stop);
    await sleep(Math.max(0, seconds - 4) * 1000);
    const page = await browser.context.newPage();
    await page.goto(`${stack.proxy.admin}/dashboard?interval=500`);
    await sleep(2500);
    await page.fill('#search', 'actor-01');
    await sleep(1500);
    mkdirSync(path.dirname(file), { recursive: true });
    await page.screenshot({ path: file, fullPage: true });
    stop = true;
    await flowing;
    socket.ws.close();
    process.stdout.write(`dashboard screenshot: ${file}\n`);
  } finally {
    await browser.close();
    await stack.stop();
    await client.close();
  }
}

main(parseArgs(process.argv.slice(2))).catch((err: unknown) => {
  process.stderr.write(`screenshot: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
