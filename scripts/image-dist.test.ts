import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeFile } from './image-dist.js';

test('the runtime image holds the components and the container helpers only', () => {
  for (const f of ['cli/main.js', 'proxy/edge/ingress.js', 'proxy/edge/ingress.js.map', 'extproc/server.js', 'apiserver-stub/worker-main.js', 'lib/tls/identity.js', 'scripts/container-entry.js', 'scripts/container-ip.js', 'scripts/healthcheck.js']) {
    assert.equal(runtimeFile(f), true, f);
  }
  for (const f of [
    'bench/run.js', // the benchmark has its own image
    'examples/filters/add-header.js',
    'scripts/start-stack.js',
    'scripts/stack/launcher.js',
    'scripts/compose/check.js',
    'proxy/edge/ingress.test.js',
    'proxy/testing/helpers.js',
    'proxy/e2e/mtls.test.js',
    'lib/tls/testing/pki.js',
    'proxy/api/public.d.ts',
  ]) {
    assert.equal(runtimeFile(f), false, f);
  }
});
