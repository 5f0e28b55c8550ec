/**
 * Headless Chromium for the dashboard's tests and its screenshot: the system browser (Debian's `chromium`, or
 * `CHROMIUM_PATH`) driven by playwright-core, with a fresh profile directory removed on close, and every
 * background service that would reach the network turned off (the page only talks to the admin on loopback).
 */
import { existsSync } from 'node:fs';
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
  /** The context the browser was launched with (its viewport and credentials). */
  readonly context: BrowserContext;
  /** Another context of the same browser: its own credentials, cookies and connections; closed with the browser. */
  newContext(opts?: ContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

export interface ContextOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  /** What the browser answers an HTTP login prompt with (absent: it cancels the prompt). */
  readonly httpCredentials?: { readonly username: string; readonly password: string };
}

export interface BrowserOptions extends ContextOptions {
  /** Names the browser resolves to an address of the test's choosing, e.g. `{ 'rebind.evil.example': '127.0.0.1' }`. */
  readonly resolve?: Readonly<Record<string, string>>;
}

export async function launchBrowser(opts: BrowserOptions = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const rules = Object.entries(opts.resolve ?? {}).map(([name, address]) => `MAP ${name} ${address}`);
  const contextOptions = (o: ContextOptions) => ({
    viewport: o.viewport ?? { width: 1280, height: 900 },
    ...(o.httpCredentials === undefined ? {} : { httpCredentials: { ...o.httpCredentials } }),
  });
  // Its profile is a fresh temporary directory that playwright removes when the browser closes.
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: rules.length === 0 ? ARGS : [...ARGS, `--host-resolver-rules=${rules.join(', ')}`],
  });
  const context = await browser.newContext(contextOptions(opts)).catch(async (err: unknown) => {
    await browser.close();
    throw err;
  });
  return {
    context,
    newContext: (o = {}) => browser.newContext(contextOptions(o)),
    close: () => browser.close(),
  };
}
