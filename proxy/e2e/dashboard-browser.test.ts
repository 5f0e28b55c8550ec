/**
 * The live dashboard in a real browser: headless Chromium (the system's, driven by playwright-core) loads
 * `/dashboard` from a real proxy (with a real stub and extproc), traffic is sent through the ingress, and the
 * numbers on the page must move without a reload and then equal what `/stats` and `/metrics` say: requests, hits,
 * misses, the hit ratio, ext_proc streams, errors by status, open tunnels, the latency rows, and a binding found
 * with the search box. A page opened later arrives with its first frame drawn (the admin embeds its answers): the
 * numbers and the charts of the last seconds, before any poll. With `--admin-token` the admin guard covers the dashboard too: the browser gets the page
 * and its polls only once its login prompt is answered with the token, and a page reached through a rebinding name
 * (the browser resolves it to the admin's address) gets nothing. Skipped, with the reason, where no Chromium is
 * installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { metricSum } from '../../lib/testing/scrape.js';
import type { BrowserContext } from 'playwright-core';
import { browserMissing, launchBrowser, type Browser, type ContextOptions } from '../admin/dashboard/testing/browser.js';
import { waitFor } from '../../lib/testing/wait.js';
import { adminJson, client, send, startStack, STACK_TIMEOUTS, type Extproc, type Stack } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { openSocket } from '../testing/ws-client.js';
import type { StatsDocument } from '../admin/stats-document.js';

const missing = browserMissing();

let stack: Stack | undefined;
let extproc: Extproc;
let proxy: InProcessTestProxy;
let browser: Browser | undefined;

before(async () => {
  if (missing !== undefined) return;
  // The browser starts while the stack does (each is kept for after() as soon as it is up, whatever the other does).
  const starting = startStack({ stub: { workers: 3, capacity: 4, actors: 12 }, proxyArgs: ['--cache-ttl-ms', '600000'] }).then((s) => (stack = s));
  // The rebinding name of the guarded test resolves to the admin's address in this browser.
  const launching = launchBrowser({ resolve: { 'rebind.evil.example': '127.0.0.1' } }).then((b) => (browser = b));
  await Promise.all([starting, launching]);
  ({ extproc, proxy } = stack as Stack);
});

after(async () => {
  await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
  await browser?.close();
  await stack?.stop();
});

type Stats = StatsDocument;

test('the dashboard updates without a reload and shows what /stats and /metrics say', { skip: missing ?? false }, async () => {
  const page = await (browser as Browser).context.newPage();
  const failures: string[] = [];
  page.on('pageerror', (e) => failures.push(e.message));
  page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(`${proxy.admin}/dashboard?interval=250`);
  const text = async (id: string): Promise<string> => ((await page.textContent(`#${id}`)) ?? '').trim();
  const polls = async (): Promise<number> => Number(await page.getAttribute('body', 'data-polls'));
  await waitFor(async () => (await polls()) >= 2, 10_000, 'the first polls');
  assert.equal(await text('requests-total'), '0');
  assert.equal(await text('ready'), 'LIVE');
  assert.equal(await text('hit-ratio'), '—');

  // Traffic: misses, then hits (at least one round of them), until the page has shown a request rate above zero (it
  // polls every 250 ms; on a slow machine it may see the misses' rate already).
  const actors = Array.from({ length: 6 }, (_, i) => `actor-00${i}`);
  let sawRate = false;
  for (let round = 0; (round < 2 || !sawRate) && round < 200; round++) {
    for (const a of actors) assert.equal((await send(proxy, a)).status, 200);
    sawRate = Number(await text('request-rate')) > 0;
  }
  assert.ok(sawRate, 'the request rate moved while traffic flowed');
  assert.equal((await send(proxy, 'x', { host: 'not-an-actor.example' })).status, 404, 'ext_proc answers 404 for a host that names no actor');
  const socket = await openSocket(proxy.ingress, 'actor-001');
  await waitFor(async () => (await text('tunnels-upgrade')) === '1', 10_000, 'the open tunnel on the page');

  // Traffic stops: the page settles on exactly what the admin says.
  const stats = await adminJson<Stats>(proxy.admin, '/stats');
  const scrape = await (await request(`${proxy.admin}/metrics`, { dispatcher: client })).body.text();
  // A poll under way now may have read /stats before the last requests: the one after it reads only the settled
  // counters, and the one after that also computes its rates between two settled reads.
  const settled = await polls();
  await waitFor(async () => (await polls()) >= settled + 3, 10_000, 'three more polls');
  assert.equal(await text('requests-total'), String(stats.requests.total));
  assert.equal(await text('hits'), String(stats.cache.hits));
  assert.equal(await text('misses'), String(stats.cache.misses));
  assert.ok(stats.cache.hits > 0 && stats.cache.misses >= actors.length);
  assert.equal(await text('hit-ratio'), `${((stats.cache.hitRatio as number) * 100).toFixed(1)} %`);
  assert.equal(await text('resolver-label'), 'ext_proc streams/s');
  assert.equal(await text('resolver-total'), String(stats.extproc.streams));
  assert.equal(await text('errors-4xx'), String(stats.requests.byStatus['4xx']));
  assert.equal(await text('tunnels-upgrade'), String(stats.tunnels.upgrade.active));
  assert.equal(await text('request-rate'), '0.0', 'no traffic now');
  const errorRows = await page.$$eval('#errors tr[data-code]', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td') as ArrayLike<{ textContent: string | null }>, (td) => td.textContent ?? '')));
  assert.deepEqual(errorRows, [['404', '1']], 'the one 4xx, by status');
  // Latency rows: every request finished since the page's first poll, by cache outcome, p50 ≤ p99.
  const rows = await page.$$eval('#latency tr[data-cache]', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td') as ArrayLike<{ textContent: string | null }>, (td) => td.textContent ?? '')));
  assert.ok(rows.length >= 1, 'latency rows');
  assert.equal(rows.reduce((n, r) => n + Number(r[1]), 0), metricSum(scrape, 'actor_edge_proxy_request_duration_seconds_count'));
  for (const r of rows) assert.ok(Number(r[2]) > 0 && Number(r[2]) <= Number(r[3]), `p50 ≤ p99: ${r.join(' ')}`);

  // The bindings table: search for one actor.
  await page.fill('#search', 'actor-003');
  await waitFor(async () => (await page.getAttribute('#bindings', 'data-query')) === 'actor-003', 10_000, 'the search to be applied');
  const found = await page.$$eval('#bindings tr[data-key]', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td') as ArrayLike<{ textContent: string | null }>, (td) => td.textContent ?? '')));
  const binding = await adminJson<{ binding: { key: string; address: string } }>(proxy.admin, '/cache/demo/actor-003');
  assert.deepEqual(found.map((r) => [r[0], r[1]]), [[binding.binding.key, binding.binding.address]]);
  assert.equal(await text('bindings-matched'), '1');

  socket.ws.close();
  await waitFor(async () => (await text('tunnels-upgrade')) === '0', 10_000, 'the closed tunnel on the page');
  assert.deepEqual(failures, [], 'no script error and no failed request on the page');
});

test('a page opened after traffic shows it in its first frame, charts included, before any poll', { skip: missing ?? false }, async () => {
  const stats = await adminJson<Stats>(proxy.admin, '/stats');
  const page = await (browser as Browser).context.newPage();
  const failures: string[] = [];
  page.on('pageerror', (e) => failures.push(e.message));
  await page.goto(`${proxy.admin}/dashboard?interval=600000`); // no poll while this test looks
  assert.deepEqual([await page.getAttribute('body', 'data-frame'), await page.getAttribute('body', 'data-polls')], ['embedded', '0']);
  assert.equal(((await page.textContent('#requests-total')) ?? '').trim(), String(stats.requests.total));
  assert.equal(((await page.textContent('#hits')) ?? '').trim(), String(stats.cache.hits));
  // The charts: the rate over every second since the proxy started, the hit ratio and p99 of the seconds with hits.
  const paths = await page.$$eval('svg.chart path', (ps) =>
    ps.map((p) => ({ chart: p.parentElement?.id, cls: p.getAttribute('class'), points: Number(p.getAttribute('data-points')), d: p.getAttribute('d') ?? '' })),
  );
  const byName = new Map(paths.map((p) => [`${p.chart} ${p.cls}`, p]));
  assert.ok((byName.get('chart-rate s-rate')?.points ?? 0) >= 2, `requests/s over seconds: ${JSON.stringify(paths)}`);
  for (const name of ['chart-rate s-rate', 'chart-hit s-hit', 'chart-p99 s-hit', 'chart-p99 s-miss']) {
    assert.ok((byName.get(name)?.points ?? 0) >= 1, name);
    assert.match(byName.get(name)?.d ?? '', /^M-?[\d.]+,-?[\d.]+ L/, `${name}: a drawn line`);
  }
  assert.deepEqual(failures, []);
  await page.close();
});

test('with --admin-token: 401 until the browser\'s login prompt gets the token, then the page polls; a rebinding name gets 403', { skip: missing ?? false }, async () => {
  const token = 'dashboard-token';
  // The guarded proxy and, in the file's browser, a context without credentials (it cancels the login prompt) and
  // one with the token start side by side; whichever is up is closed below, whatever the others do. (The contexts
  // are this test's own, each with its own connections: one that keeps a connection to the guarded admin open
  // would hold up its stop.)
  let started: InProcessTestProxy | undefined;
  const opened: BrowserContext[] = [];
  const open = (opts?: ContextOptions): Promise<BrowserContext> => (browser as Browser).newContext(opts).then((c) => (opened.push(c), c));
  try {
    const [guarded, withoutToken, withToken] = await Promise.all([
      startTestProxy({ mode: 'in-process', extproc: extproc.grpc, args: [...STACK_TIMEOUTS, '--admin-token', token] }).then((p) => (started = p)),
      open(),
      open({ httpCredentials: { username: 'operator', password: token } }),
    ]);
    const refused = await withoutToken.newPage();
    // Challenged (401 with a Basic challenge), with no credentials to answer it: the browser shows no page.
    await assert.rejects(refused.goto(`${guarded.admin}/dashboard`), /ERR_INVALID_AUTH_CREDENTIALS/, 'no token, no page');

    const page = await withToken.newPage();
    const failures: string[] = [];
    page.on('pageerror', (e) => failures.push(e.message));
    assert.equal((await page.goto(`${guarded.admin}/dashboard?interval=250`))?.status(), 200);
    const text = async (id: string): Promise<string> => ((await page.textContent(`#${id}`)) ?? '').trim();
    await waitFor(async () => Number(await page.getAttribute('body', 'data-polls')) >= 2, 10_000, 'the first polls');
    assert.equal(await text('status'), '', 'the polls of /stats and /metrics were answered');
    assert.equal((await send(guarded, 'actor-004')).status, 200);
    await waitFor(async () => (await text('requests-total')) === '1', 10_000, 'the request on the page');
    assert.equal(await text('ready'), 'LIVE');
    assert.deepEqual(failures, []);

    // DNS rebinding: the same admin, reached by a name a foreign page controls, even with the token at hand.
    const port = new URL(guarded.admin).port;
    for (const path of ['/dashboard', '/cache', '/stats']) {
      const rebound = await page.goto(`http://rebind.evil.example:${port}${path}`);
      assert.equal(rebound?.status(), 403, path);
      assert.equal(((await rebound?.json()) as { code: string }).code, 'ADMIN_FOREIGN_HOST', path);
    }
    assert.equal((await page.goto(`http://rebind.evil.example:${port}/ready`))?.status(), 200, 'the health check answers anyone');
  } finally {
    for (const c of opened) await c.close();
    await (started as InProcessTestProxy | undefined)?.stop();
  }
});
