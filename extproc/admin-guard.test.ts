/**
 * End to end (extproc in the test's process, from its flags): extproc's admin refuses cross-site and rebinding calls
 * (reads included), and calls without --admin-token.
 */
import { test } from 'node:test';
import { assertAdminGuarded } from '../lib/testing/admin-guard-checks.js';
import { startExtprocInProcess } from './testing/in-process.js';

test('extproc: the admin guard', async () => {
  const token = 'extproc-admin-secret';
  const extproc = await startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', '127.0.0.1:1', '--admin-token', token]);
  try {
    await assertAdminGuarded(extproc.addresses.admin!, token, [{ method: 'POST', path: '/stats/reset' }]);
  } finally {
    await extproc.stop();
  }
});
