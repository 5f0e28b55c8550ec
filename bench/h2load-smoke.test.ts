/**
 * The h2load arms, tiny: C-h2c (HTTP/2 over cleartext) and C-h2 (HTTP/2 over TLS, ALPN h2) answer through the
 * proxy, with hits from the cache. Checks that they answered, never how fast.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshOutDir, readReport, removeOutDirs, runBench } from './testing/run-bench.js';

after(removeOutDirs);

test('the h2load arms C-h2c and C-h2 answer over h2c and over TLS', { timeout: 90_000 }, async () => {
  const outDir = await freshOutDir();
  const { code, stdout, stderr } = await runBench(['--quick', '--arms', 'C-h2c,C-h2', '--duration', '1', '--warmup', '0.5', '--out-dir', outDir]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /\| C-h2 \| [\d,]+ \|/);
  const report = await readReport(outDir);
  assert.deepEqual(report.arms.map((a) => a.name), ['C-h2c', 'C-h2']);
  for (const arm of report.arms) {
    assert.ok(arm.requests > 0 && arm.rps > 0, `${arm.name} answered`);
    assert.equal(arm.non2xx, 0, `${arm.name} non-2xx`);
    assert.equal(arm.errors, 0, `${arm.name} errors`);
    assert.ok(arm.cache && arm.cache.hits > 0, JSON.stringify(arm.cache));
  }
});
