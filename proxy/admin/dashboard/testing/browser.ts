/**
 * Headless Chromium for the dashboard's tests and its screenshot: the system browser (Debian's `chromium`, or
 * `CHROMIUM_PATH`) driven by playwright-core, with a fresh profile directory removed on close, and every
 * background service that would reach the network turned off (the page only talks to the admin on loopback).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. With `REQUIRE_TEST_TOOLS=1` (CI) it is always
 * undefined: a missing browser then fails the tests instead of skipping them.
 */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH) || process.env.REQUIRE_TEST_TOOLS === '1') return undefined;
  return `no Chromium at ${CHROMIUM_PATH} (install Debian's chromium, or set CHROMIUM_PATH)`;
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export interface BrowserOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  /** What the browser answers an HTTP login prompt with (absent: it cancels the prompt). */
  readonly httpCredentials?: { readonly username: string; readonly password: string };
  /** Names the browser resolves to an address of the test's choosing, e.g. `{ 'rebind.evil.example': '127.0.0.1' }`. */
  readonly resolve?: Readonly<Record<string, string>>;
}

export async function launchBrowser(opts: BrowserOptions = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'actor-edge-chromium-'));
  const rules = Object.entries(opts.resolve ?? {}).map(([name, address]) => `MAP ${name} ${address}`);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: rules.length === 0 ? ARGS : [...ARGS, `--host-resolver-rules=${rules.join(', ')}`],
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    ...(opts.httpCredentials === undefined ? {} : { httpCredentials: { ...opts.httpCredentials } }),
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
