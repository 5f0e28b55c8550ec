/**
 * End to end (the stub in the test's process, from its flags and environment): the stub's admin refuses cross-site
 * and rebinding calls (reads included), and calls without its token.
 */
import { test } from 'node:test';
import { assertAdminGuarded } from '../lib/testing/admin-guard-checks.js';
import { startStubInProcess } from './testing/in-process.js';

test('apiserver-stub: the admin guard', async () => {
  const token = 'stub-admin-secret';
  const stub = await startStubInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '0', '--actors', '1'], { APISERVER_ADMIN_TOKEN: token });
  try {
    await assertAdminGuarded(stub.addresses.admin!, token, [
      { method: 'POST', path: '/stats/reset' },
      { method: 'DELETE', path: '/churn' },
      { method: 'PUT', path: '/config' },
    ]);
  } finally {
    await stub.stop();
  }
});
