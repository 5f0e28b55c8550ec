#!/usr/bin/env node
/**
 * The containers' health check (compose): `node dist/scripts/healthcheck.js http://HOST:PORT/ready` succeeds on a
 * 2xx answer, `node dist/scripts/healthcheck.js tcp://HOST:PORT` when the port accepts a connection; anything else,
 * or no answer within two seconds, fails (exit 1). One small file instead of inline `node -e` code.
 */
import net from 'node:net';
import { pathToFileURL } from 'node:url';

const TIMEOUT_MS = 2000;

export async function healthy(target: string): Promise<boolean> {
  const url = new URL(target);
  if (url.protocol === 'tcp:') {
    return new Promise((resolve) => {
      const socket = net.connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port), timeout: TIMEOUT_MS });
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.once('connect', () => done(true));
      socket.once('timeout', () => done(false));
      socket.once('error', () => done(false));
    });
  }
  if (url.protocol !== 'http:') throw new Error(`healthcheck: ${target} is neither http:// nor tcp://`);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const target = process.argv[2];
  if (target === undefined) {
    process.stderr.write('usage: healthcheck.js http://HOST:PORT/PATH | tcp://HOST:PORT\n');
    process.exit(2);
  }
  process.exit((await healthy(target)) ? 0 : 1);
}
