/**
 * End to end: the proxy's admin (standalone and the `--workers 2` cluster primary) refuses cross-site and
 * rebinding calls, reads included (the index, the dashboard and its files, `/upstreams`), and, with
 * PROXY_ADMIN_TOKEN set, calls without the token; the primary forwards the token to its workers' admins.
 */
import { test } from 'node:test';
import { startComponent } from '../../lib/testing/component.js';
import { assertAdminGuarded, COMMON_READS } from '../../lib/testing/admin-guard-checks.js';

const TOKEN = 'proxy-admin-secret';
const CALLS = [
  { method: 'POST', path: '/stats/reset' },
  { method: 'DELETE', path: '/cache' },
] as const;
/** Besides every component's reads: the proxy's own, the dashboard and its files included. */
const READS = [...COMMON_READS, '/upstreams', '/dashboard', '/dashboard/view.js', '/dashboard/model.js', '/dashboard/style.css'];

for (const workers of ['1', '2']) {
  test(`proxy --workers ${workers}: the admin guard`, async () => {
    const proxy = await startComponent(
      'proxy',
      ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--extproc', '127.0.0.1:1', '--access-log', 'off', '--workers', workers],
      { env: { PROXY_ADMIN_TOKEN: TOKEN } },
    );
    try {
      await assertAdminGuarded(proxy.addresses.admin!, TOKEN, CALLS, READS);
    } finally {
      await proxy.stop();
    }
  });
}
