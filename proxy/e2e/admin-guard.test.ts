/**
 * End to end: the proxy's admin (standalone and the `--workers 2` cluster primary) refuses cross-site and
 * rebinding calls, reads included (the index, the dashboard and its files, `/upstreams`), and, with
 * PROXY_ADMIN_TOKEN set, calls without the token; the primary forwards the token to its workers' admins.
 * Needs processes: `--workers 2` is a node:cluster primary and its workers (`--workers 1` runs in the test's process).
 */
import { test } from 'node:test';
import { assertAdminGuarded, COMMON_READS } from '../../lib/testing/admin-guard-checks.js';
import { startTestProxy } from '../testing/proxy.js';

const TOKEN = 'proxy-admin-secret';
const CALLS = [
  { method: 'POST', path: '/stats/reset' },
  { method: 'DELETE', path: '/cache' },
] as const;
/** Besides every component's reads: the proxy's own, the dashboard and its files included. */
const READS = [...COMMON_READS, '/upstreams', '/stats/history', '/dashboard', '/dashboard/view.js', '/dashboard/model.js', '/dashboard/history.js', '/dashboard/style.css'];

for (const workers of ['1', '2'] as const) {
  test(`proxy --workers ${workers}: the admin guard`, async () => {
    const opts = { extproc: '127.0.0.1:1', args: ['--access-log', 'off', '--workers', workers], env: { PROXY_ADMIN_TOKEN: TOKEN } };
    const proxy = workers === '1' ? await startTestProxy({ ...opts, mode: 'in-process' }) : await startTestProxy(opts);
    try {
      await assertAdminGuarded(new URL(proxy.admin).host, TOKEN, CALLS, READS);
    } finally {
      await proxy.stop();
    }
  });
}
