/**
 * The refresh-cost tool end to end, small.
 * Needs processes: the stub and extproc run as their own processes, as the benchmark runs them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureRefreshCost, renderRefreshCost } from './refresh-cost.js';

test('refresh-cost: every re-validation through a real extproc is routed, and the per-refresh figures are real numbers', async () => {
  // A short warm-up: the figures only have to be real numbers here, not steady ones.
  const r = await measureRefreshCost(20, 5, 20);
  assert.equal(r.refreshes, 20);
  assert.equal(r.node, process.version);
  for (const [name, v] of Object.entries({ cpu: r.cpuUsPerRefresh, user: r.userUsPerRefresh, wall: r.wallUsPerRefresh })) {
    assert.ok(Number.isFinite(v) && v > 0, `${name} per refresh is ${v}`);
  }
  assert.ok(r.userUsPerRefresh <= r.cpuUsPerRefresh, 'user CPU is part of the CPU');
  assert.match(renderRefreshCost(r), new RegExp(`\\| 20 \\| ${process.version.replace(/\./g, '\\.')} \\| ${r.cpuUsPerRefresh.toFixed(0)} \\|`));
});
