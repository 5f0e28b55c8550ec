/**
 * `npm run bench -- --tracing on`, tiny: the proxy and extproc of arm C trace every request to the bench's
 * span-counting receiver, and the report says tracing was on. Checks that spans arrive, never what they cost.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshOutDir, readReport, removeOutDirs, runBench } from './testing/run-bench.js';

after(removeOutDirs);

test('--tracing on: the proxy and extproc export their spans to the bench, at least three for every request (server, lookup, upstream)', { timeout: 90_000 }, async () => {
  const outDir = await freshOutDir();
  const { code, stderr } = await runBench(['--quick', '--arms', 'C', '--duration', '1', '--warmup', '0.5', '--tracing', 'on', '--trace-ratio', '1', '--out-dir', outDir]);
  assert.equal(code, 0, stderr);
  // Logged (on stderr) once the arm's proxy stopped: every span it made was exported by then.
  const spans = Number(/tracing \(ratio 1\): ([\d,]+) spans/.exec(stderr)?.[1]?.replaceAll(',', ''));
  const report = await readReport(outDir);
  const c = report.arms[0]!;
  assert.ok(c.requests > 0 && c.non2xx === 0, `C answered: ${c.requests} requests, ${c.non2xx} non-2xx`);
  assert.ok(spans >= 3 * c.requests, `${spans} spans for ${c.requests} measured requests`);
  assert.equal(report.settings.tracing, 'on (ratio 1)');
});
