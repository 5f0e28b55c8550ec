/** End to end: extproc's admin refuses cross-site and rebinding calls (reads included), and calls without --admin-token. */
import { test } from 'node:test';
import { startComponent } from '../lib/testing/component.js';
import { assertAdminGuarded } from '../lib/testing/admin-guard-checks.js';

test('extproc: the admin guard', async () => {
  const token = 'extproc-admin-secret';
  const extproc = await startComponent('extproc', ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', '127.0.0.1:1', '--admin-token', token]);
  try {
    await assertAdminGuarded(extproc.addresses.admin!, token, [{ method: 'POST', path: '/stats/reset' }]);
  } finally {
    await extproc.stop();
  }
});
